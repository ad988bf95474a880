"""The grid an automatic-prefix cache reads on, per model: the evidence behind the profiles'
`read_units` (sim/providers/auto_prefix.py `read_grid`).

OpenAI documents cache hits "in increments of 128 tokens" (providers.md §2.1), but some models'
bills read on a coarser grid: every read of gpt-5.4-mini and gpt-5.5 is 384 + 512·k tokens (and on
Z.ai, which documents no grid, every read of glm-4.7 is 128·k, sim/data/profiles/zai.yaml). A grid
coarser than the 128-token tolerance matters: a read rounded to the wrong one is off by up to a
step of uncached input.

The measurement (`python -m ctxbench.bench.fidelity.measure`, development part only) takes, per
model, the requests after a conversation's first whose bill read no more than the previous prompt
(nothing of the previous output: the grid alone decides where the read ends) and counts how often
the previous prompt (or this one, when shorter) rounded down to each candidate grid is the billed
read exactly: the documented 128-token steps, and 256, 512 and 1,024 tokens from the residue most of
the model's reads have; beside each, the share of the model's reads on that grid. A profile lists a
model in `read_units` with a coarser grid when it is exact most often and holds at least `SHARE` of
the model's reads (`listed`): a grid of the model's, not a mixture. gpt-5's reads are a mixture: on
the development part 768 + 1,024·k is exact most often (245 of 482 requests, against 140) but holds
60 % of its reads, all in one repository's October 2025 logs, while the shared August 2025 log reads
33 + 128·k; rounding every gpt-5 read to that grid dropped that log's requests within tolerance
from 9 of 20 to 2.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from ctxbench.bench.fidelity.gaps import prompt_of
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.sim.providers.auto_prefix import granular, grid_start

STEPS = (128, 256, 512, 1024)
FLOOR = 10  # requests to compare at least, for a model's grids to be reported
SHARE = 0.99  # of a model's reads on a grid, for the grid to be the model's (module docstring)
MINIMUM = 1024  # providers.md §2.1: no read below 1,024 tokens


@dataclass
class GridCounts:
    """One model's billed reads (size: count) and its comparable requests (module docstring)."""

    reads: Counter[int] = field(default_factory=Counter)
    prefixes: list[tuple[int, int]] = field(default_factory=list)  # (prefix, billed read)


def count_grids(sf: SessionFidelity, acc: dict[str, GridCounts]) -> None:
    """Add the requests of `sf` to the counts of the model each ran on."""
    for r in sf.requests:
        if r.billed.cache_read:
            acc.setdefault(r.model or sf.model, GridCounts()).reads[r.billed.cache_read] += 1
    for a, b in itertools.pairwise(sf.requests):
        read, prefix = b.billed.cache_read, min(prompt_of(a), prompt_of(b))
        if read and a.model == b.model and read <= prefix:
            acc.setdefault(b.model or sf.model, GridCounts()).prefixes.append((prefix, read))


def exact(g: GridCounts) -> list[tuple[int, int, int, float]]:
    """(step, residue, requests whose prefix rounded down to that grid is the billed read, share of
    the model's reads on the grid) for each candidate step, from the residue most of them have."""
    out = []
    n = sum(g.reads.values())
    for step in STEPS:
        by = Counter[int]()
        for read, k in g.reads.items():
            by[read % step] += k
        residue, on = by.most_common(1)[0] if by else (0, 0)
        first = grid_start(MINIMUM, step, residue)
        hits = sum(granular(x, first, step) == read for x, read in g.prefixes)
        out.append((step, residue, hits, on / n if n else 0.0))
    return out


def listed(g: GridCounts) -> tuple[int, int] | None:
    """(step, residue) of a grid coarser than 128 tokens that a profile lists for the model: exact
    most often (the finest of those tied) and holding at least `SHARE` of its reads; None if none."""
    step, residue, _, share = max(exact(g), key=lambda t: (t[2], -t[0]))
    return (step, residue) if step > STEPS[0] and share >= SHARE else None


def grids_json(acc: dict[str, GridCounts]) -> dict[str, object]:
    """`measure --json`'s `read_grids`: per model, the counts of `exact` and the grid `listed`."""
    return {
        m: {
            "requests": len(g.prefixes),
            "exact": {f"{s}/{r}": [n, round(share, 4)] for s, r, n, share in exact(g)},
            "listed": listed(g),
        }
        for m, g in sorted(acc.items())
        if len(g.prefixes) >= FLOOR
    }


def grids_line(acc: dict[str, GridCounts]) -> str:
    """The measurement's line: per model, how often each grid rounds the previous prompt to the read."""
    cells = "; ".join(
        f"{m} {len(g.prefixes)}: " + ", ".join(f"{s}/{r} {n} ({share:.0%})" for s, r, n, share in exact(g))
        for m, g in sorted(acc.items())
        if len(g.prefixes) >= FLOOR
    )
    return (
        "reads on each grid (step/residue), requests whose previous prompt rounded down to it is the "
        f"billed read (share of the model's reads on the grid), by model (read no more than that "
        f"prompt; at least {FLOOR}): {cells or 'none'}"
    )
