"""The vocabulary of the prefix check: the classes of a break, a `Break` and a `Report`
(bench/prefix/check.py finds them, classify.py names them, report.py prints them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CLASSES = (
    "side_request",
    "new_conversation",
    "reset_after_compaction",
    "tail_edit",
    "mid_conversation_edit",
    "static_prefix_edit",
)
DEFAULT_ALLOWED = ("side_request", "new_conversation")
# Edits a producer declares (a record's `edit`), each of which explains the break it makes:
# Gemini CLI's thought-signature rewrite is the harness's own (sim/harness/signatures.py).
DECLARED_EDITS = ("compaction", "eviction", "trim", "thought_signatures")


@dataclass(frozen=True)
class Break:
    request: int  # 0-based index of the request in the log
    line: int  # its line in the log (0 when unknown)
    parent: int | None
    parent_line: int
    segment: str  # tools | system | messages | end (the request ends inside its parent)
    message: int | None
    block: int | None
    offset: int | None  # byte offset of the first different byte inside the block
    cls: str
    explained: bool
    declared: str
    old: str  # parent's bytes around the divergence
    new: str  # this request's bytes around it
    label: str = ""
    tokens: int = 0  # re-billed by the break (bench/prefix/recognise.py `break_tokens`)
    note: str = ""  # what the log itself shows (bench/prefix/recognise.py): compaction request, fields
    path: str = ""  # first differing field, as a key path in the normalized request (culprit.py)
    before: str = ""  # its value in the parent (short)
    after: str = ""  # its value in this request (short)
    hint: str = ""  # the usual cause the change looks like (culprit.py `hint`)
    dollars: float | None = None  # the break's price on the log's model (None: model not priced)
    model: str = ""
    key: str = ""  # content key a baseline accepts it by (culprit.py `content_key`)

    @property
    def signature(self) -> tuple[Any, ...]:
        """The index-keyed name of version-1 baselines (still read)."""
        return (self.request, self.cls, self.segment, self.message, self.block, self.offset)

    def where(self) -> str:
        if self.segment in ("tools", "system"):
            return f"{self.segment} block {self.block}, byte {self.offset}"
        if self.segment == "end":
            return f"request ends inside its parent (after message {self.message})"
        if self.message is None:
            return "position unknown"
        return f"message {self.message}, block {self.block}, byte {self.offset}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    requests: int
    breaks: list[Break]
    failing: list[Break]
    source: str = ""
    notes: list[str] = field(default_factory=list)  # what the reader left out, and why

    @property
    def ok(self) -> bool:
        return not self.failing

    @property
    def dollars(self) -> float:
        """The failing breaks' price (those whose model the catalog prices)."""
        return round(sum(b.dollars or 0.0 for b in self.failing), 6)
