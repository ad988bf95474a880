"""H's system prompt as the host assembles it from the game guide (seed 000, "The System Prompt").

Seed 000: "The host builds one system prompt per run ... When building it, the host: removes HTML
comments, which are notes for maintainers; replaces the building cost tables with a pointer to
building_info, which returns one building's details on demand; drops the military sections when
the benchmark file says military: false, which roughly halves the game reference. The prompt is
identical, byte for byte, for the whole run" (H-1, H-3).

The source guide is a list of sections (rules, the game reference's civil and military parts,
the building cost tables, maintainers' HTML comments); `assemble` applies the three steps.
Section sizes are assumptions (the seed gives none) chosen so that the assembled prompt of a
military benchmark falls in the generator's drawn range (6-9 KB, `GameParams.system_bytes`); the
military part is drawn from the same range as the civil part, so dropping it roughly halves the
game reference, as the seed says. In full_text mode the sections carry real text and the steps
work on it; otherwise on sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# Section sizes of the source guide in bytes (assumed; see the module docstring).
RULES_BYTES = (2_300, 3_000)  # rules, controls, objective
REFERENCE_CIVIL_BYTES = (1_800, 2_600)  # the game reference without its military sections
REFERENCE_MILITARY_BYTES = (1_800, 2_600)  # its military sections: about half of it (seed)
COST_TABLE_BYTES = (2_500, 4_000)  # the building cost tables
COMMENT_BYTES = (200, 500)  # each maintainers' HTML comment
COMMENTS = 3
POINTER = (
    "Building costs are not listed here: call building_info with a building's name for its "
    "costs, inputs and outputs."
)  # the pointer that replaces the cost tables (seed: "a pointer to building_info")
PROMPTS = ("drawn", "assembled", "source")


@dataclass(frozen=True)
class Section:
    """One part of the source guide: `kind` is rules | civil | military | costs | comment."""

    kind: str
    nbytes: int
    text: str | None = None

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8")) if self.text is not None else self.nbytes


def source_guide(draw: Callable[[tuple[int, int]], int], words: Callable[[int], str] | None) -> list[Section]:
    """The game guide before assembly, in order; `words(n)` gives text of n bytes (full_text
    mode) or None (sizes only)."""

    def section(
        kind: str, lohi: tuple[int, int], head: str = "", wrap: tuple[str, str] = ("", "")
    ) -> Section:
        n = draw(lohi)
        if words is None:
            return Section(kind, n)
        return Section(kind, 0, f"{wrap[0]}{head}{words(n)}{wrap[1]}")

    comment = ("<!-- ", " -->\n")
    return [
        section("comment", COMMENT_BYTES, wrap=comment),
        section("rules", RULES_BYTES, "## Rules, controls and objective\n"),
        section("comment", COMMENT_BYTES, wrap=comment),
        section("civil", REFERENCE_CIVIL_BYTES, "## Game reference\n"),
        section("costs", COST_TABLE_BYTES, "## Building costs\n"),
        section("military", REFERENCE_MILITARY_BYTES, "## Military: soldiers, towers and attacks\n"),
        section("comment", COMMENT_BYTES, wrap=comment),
    ]


def assemble(guide: list[Section], military: bool) -> list[Section]:
    """The host's three steps: HTML comments removed, the building cost tables replaced by a
    pointer to building_info, the military sections dropped unless `military` (seed 000)."""
    out = []
    for s in guide:
        if s.kind == "comment" or (s.kind == "military" and not military):
            continue
        if s.kind == "costs":
            s = Section("pointer", 0, POINTER) if s.text is not None else Section("pointer", len(POINTER))
        out.append(s)
    return out


def reference_bytes(sections: list[Section]) -> int:
    """Bytes of the game reference (its civil and military sections) among `sections`."""
    return sum(s.size for s in sections if s.kind in ("civil", "military"))


def prompt_text_or_size(sections: list[Section]) -> tuple[str | None, int]:
    """The prompt as one block: its text when every section has text, else its size."""
    if all(s.text is not None for s in sections):
        return "\n".join(s.text or "" for s in sections), 0
    return None, sum(s.size for s in sections)
