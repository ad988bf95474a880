"""How the tokens a request's bill added are shared among the blocks new in it (the C_k deltas of
the `ctxbench.traces.importers.tokens` docstring), for `sizing.size_events`: images by the model's
image rule, a long text sent again at the size it got the first time, the rest in proportion to
their bytes; a prompt that shrank takes the missing tokens back from the latest blocks sized, and
the requests that sent those blocks before the shrink are named (`RESIZED`)."""

from __future__ import annotations

from typing import Any

from ctxbench.sim.core.tokens import RateCounter
from ctxbench.traces.importers.base import ImportReport, allocate
from ctxbench.traces.importers.sizing_marks import blocks_of
from ctxbench.traces.model import Event, MessageEvent

# A text of at least this many bytes sent again (Gemini CLI re-sends its 437-byte session context
# at the head of a compressed history) keeps the size it was given the first time, so the replay
# reads the same prefix as the bill (a Gemini CLI 0.61.0 run: the first request after a compression
# 133 tokens off -> exact). Shorter texts do not: their first size is a byte share of a larger
# delta, and pinning it moved the error onto their neighbours (cua pgadmin / pycharm, cost exact
# -> -0.1 % / -0.2 % with every repeated text pinned).
SAME_TEXT_BYTES = 256
# Claude Code can summarise in the background before it compacts, and compact later with that
# summary: the summariser's prompt then ends where the precompute started, and the messages since
# are kept verbatim (anthropics/claude-code#70459, 2.1.186). Such a summary request bills less than
# the request before it, and says nothing of the blocks since (the development part: afff224b of
# ahmedarafa994/eq-prediction, 2.1.88, 152,963 tokens after a request of 165,827): its bill does not
# size them, and its own new blocks are sized as a round no bill covers.
PRECOMPUTED = "summary requests precomputed from an earlier point (billed less than the request before)"
# The header's meta key naming the requests whose prompt lost tokens to a later shrink
# (`Shares.take_back`): [first, end) ranges of request numbers (every reply counts, as the replay
# counts them). Their blocks now hold fewer tokens than their bills say, so the replay's prompt
# there is short of the one sent: bench/fidelity/unsure.py falls back to the naive read on them.
RESIZED = "resized_by_later_shrink"


def _long(text: str) -> bool:
    return len(text.encode("utf-8", "surrogatepass")) >= SAME_TEXT_BYTES


class Shares:
    """The tokens of the blocks sized so far, and how a request's billed delta is shared among the
    blocks new in it: images by the model's rule, a long text sent again at its first size, the
    rest by bytes; a prompt that shrank takes the missing tokens back from the latest blocks."""

    def __init__(self, events: list[Event], rule: Any) -> None:
        self.events = events
        self.rule = rule
        self.tokens: dict[tuple[int, int], int] = {}
        self.allocated: list[tuple[int, int]] = []  # text blocks sized since the start or the last compaction
        self.sized_text: dict[tuple[str, str], int] = {}  # (kind, text) -> its first size (SAME_TEXT_BYTES)
        self.shrunk = 0
        self.precomputes = 0
        self.taken_from: int | None = None  # earliest event whose block lost tokens to this request
        self.resized: list[tuple[int, int]] = []  # (that event, the shrinking request's event)

    def take_back(self, deficit: int) -> int:
        """The prompt shrank (the harness rewrote earlier content outside the transcript): take
        the missing tokens back from the most recently sized blocks, so later requests stay exact."""
        tokens = self.tokens
        for slot in reversed(self.allocated):
            if deficit <= 0:
                break
            d = min(tokens.get(slot, 0), deficit)
            tokens[slot] -= d
            deficit -= d
            if d:
                self.taken_from = slot[0] if self.taken_from is None else min(self.taken_from, slot[0])
        return deficit

    def close_request(self, at: int) -> None:
        """The request at event `at` is sized: if its prompt shrank, remember which blocks' requests
        lost tokens (`RESIZED`)."""
        if self.taken_from is not None:
            self.resized.append((self.taken_from, at))
            self.taken_from = None

    def resized_requests(self) -> dict[str, list[list[int]]]:
        """`RESIZED` for the header's meta (nothing when no prompt shrank): the requests after a block
        that lost tokens and before the request whose shrink took them, numbered over every reply."""
        if not self.resized:
            return {}
        ordinal, n = [], 0
        for ev in self.events:
            ordinal.append(n)
            n += isinstance(ev, MessageEvent) and ev.role != "user"
        ordinal.append(n)
        spans = [[ordinal[e + 1], ordinal[at]] for e, at in self.resized if ordinal[e + 1] < ordinal[at]]
        return {RESIZED: spans} if spans else {}

    def share(self, total: int, slots: list[tuple[int, int]]) -> None:
        events, tokens, sized_text = self.events, self.tokens, self.sized_text
        fixed = 0
        text_slots = []
        for ev_i, c_i in slots:
            c = blocks_of(events[ev_i])[c_i]
            again = sized_text.get((c.kind, c.text)) if c.text and _long(c.text) else None
            if c.kind == "image":
                n = self.rule(c.width, c.height)
                tokens[(ev_i, c_i)] = n
                fixed += n
            elif again is not None and fixed + again <= total:
                tokens[(ev_i, c_i)] = again
                fixed += again
            else:
                text_slots.append((ev_i, c_i))
        if total - fixed < 0:
            self.shrunk += 1
            left = self.take_back(fixed - total)
            total = fixed - left
        weights = [max(1, blocks_of(events[e])[c].size) for e, c in text_slots]
        for slot, n in zip(text_slots, allocate(total - fixed, weights), strict=True):
            tokens[slot] = n
            c = blocks_of(events[slot[0]])[slot[1]]
            if c.text and _long(c.text) and len(text_slots) > 1:  # sized alone: its message's remainder
                sized_text.setdefault((c.kind, c.text), n)
        self.allocated.extend(text_slots)

    def strip_thinking(
        self, kept: list[tuple[int, int]], pending: list[tuple[int, int]], unseen: list[tuple[int, int]]
    ) -> tuple[int, list[tuple[int, int]]]:
        """A real user message since the last request: the prompt lost every earlier thinking block
        (providers.md §1.6). Returns the tokens of the `kept` ones that left and the pending blocks
        without thinking (those new ones go to `unseen`: no bill sizes them)."""
        events = self.events
        gone = sum(self.tokens.get(slot, 0) for slot in kept)
        dropped = set(kept)
        self.allocated[:] = [slot for slot in self.allocated if slot not in dropped]
        unseen += [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].kind == "thinking"]
        return gone, [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].kind != "thinking"]

    def precomputed(self, slots: list[tuple[int, int]], counter: RateCounter) -> None:
        """A summary request precomputed from an earlier point (`PRECOMPUTED`): its new blocks are
        sized as a round no bill covers, and it is counted."""
        self.unbilled_round(slots, counter)
        self.precomputes += 1

    def note(self, report: ImportReport, name: str) -> None:
        """Tell the import report how many requests found the prompt shrunk, and how many summary
        requests were precomputed, if any."""
        if self.precomputes:
            report.counts[PRECOMPUTED] += self.precomputes
        if self.shrunk:
            report.note(
                f"{name}: the prompt shrank before {self.shrunk} request(s) "
                "(content rewritten outside the transcript): "
                "the missing tokens were taken back from the blocks just before"
            )

    def by_rate(self, slot: tuple[int, int], counter: RateCounter) -> int:
        """A block no bill sizes: an image by rule, a reply's block by its output, text by rate."""
        ev = self.events[slot[0]]
        c = blocks_of(ev)[slot[1]]
        if c.kind == "image":
            return int(self.rule(c.width, c.height))
        if isinstance(ev, MessageEvent) and ev.role == "assistant" and ev.output_tokens is not None:
            return allocate(ev.output_tokens, [max(1, x.size) for x in ev.content])[slot[1]]
        return counter.count_bytes(c.size, c.lang)

    def unbilled_round(self, pending: list[tuple[int, int]], counter: RateCounter) -> None:
        """The round before a compaction that no bill covers (no summariser request merged from the
        log): sized by `by_rate`, not left at 0, so a policy that compacts later sees it (issue 29)."""
        self.tokens.update({sl: self.by_rate(sl, counter) for sl in pending if sl not in self.tokens})

    def after_last_request(
        self, unseen: list[tuple[int, int]], pending: list[tuple[int, int]], counter: RateCounter
    ) -> None:
        """Blocks no bill sized: thinking never in a billed prompt at the calibrated byte rate;
        after the last request, the last reply at its output, images by rule, the rest by rate."""
        events, tokens = self.events, self.tokens
        for ev_i, c_i in unseen:
            c = blocks_of(events[ev_i])[c_i]
            tokens[(ev_i, c_i)] = counter.count_bytes(c.size, c.lang)
        for slot in pending:
            tokens[slot] = self.by_rate(slot, counter)
