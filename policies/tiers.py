"""Harness C's context components: the C-4 estimator and the tiered compaction (C-5..C-13, C-17).

Components read a `View` and return plans or edits; the harness (`sim/harness/coding.py`) makes the
model calls, applies the edits and keeps the state that lives across checks (back-off C-12,
savings C-15, the live compact mode C-17). Shared helpers here (tool-pair trims, the tail
boundary, per-message estimates, the summarize plan) are also used by the presets of other
harnesses in `policies/condensers.py`.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from ctxbench.policies.contracts import (
    Action,
    CompactionDefaults,
    CompactionRules,
    Summarize,
    SummaryPlan,
    SummaryRequest,
    Trim,
)
from ctxbench.policies.estimators import AnchoredEstimator
from ctxbench.policies.view import Edit, View
from ctxbench.sim.core.content import TOOL_RESULT, TOOL_USE, Block, Message
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.core.values import Fraction, Tokens

MODES = ("default", "fast")  # C-17


@register("estimator", "c-usage")
@dataclass(frozen=True)
class CUsageEstimator(AnchoredEstimator):
    """C-4: the provider-reported count of the last completed turn plus an estimate of what was
    added since, images ~1.5k tokens each; the whole pending transcript when no trustworthy
    report exists (the harness marks the anchor untrustworthy after repeated failures or a
    report without usage). Text rate: bytes/4 (assumed: the seed gives no rate; chars/4 is the
    rate of Claude Code, Codex and opencode, research/policies.md §10)."""

    bytes_per_token: float = 4.0  # assumed (policies.md §10: chars/4 in three harnesses)
    image_tokens: Tokens = 1500  # C-4, C-2: images ~1.5k tokens each
    anchor: bool = True  # C-4


# ---------------------------------------------------------------- helpers shared by presets
def msg_estimate(m: Message, bytes_per_token: float, image_tokens: int) -> int:
    """A harness-side estimate of one message (never the true count)."""
    return math.ceil(m.nbytes / bytes_per_token) + m.images * image_tokens


def is_reply(m: Message) -> bool:
    return m.role == "assistant"


def is_user_turn(m: Message) -> bool:
    """A user message of the person, not one carrying tool results."""
    return m.role == "user" and not m.has_tool_result


def nth_last(tr: Transcript, n: int, pick: Callable[[Message], int], first: int = 0) -> int:
    """Index of the n-th last message at or after `first` that `pick` selects, or `first` when
    there are fewer; from the transcript's running count of them (no walk over the messages)."""
    sums = tr.message_sums(pick)
    total = sums[-1] if sums else 0
    if total - (sums[first - 1] if first > 0 else 0) < n:
        return first
    return bisect_left(sums, total - n + 1)


def is_summary(m: Message) -> bool:
    return m.marked > 0 and any(b.summary for b in m.blocks)


def has_skill(m: Message) -> bool:
    return m.marked > 0 and any(b.skill for b in m.blocks)


def _with_tool_id(b: Block) -> bool:
    return bool(b.tool_id)


def _first_block(view: View) -> int:
    """Position of the first block after the pinned preparation exchange."""
    tr = view.tr
    return (
        tr.msg_starts[view.preparation_messages] if view.preparation_messages < len(tr.messages) else len(tr)
    )


def tool_calls(view: View, exempt_skills: bool = True) -> list[str]:
    """Ids of the tool calls in the conversation, oldest first (skill loads exempt, C-8), from
    the transcript's index of the blocks that carry a tool id."""
    tr = view.tr
    blocks = tr.blocks
    with_id = tr.block_index(_with_tool_id)
    first = bisect_left(with_id, _first_block(view))
    ids = [blocks[p].tool_id for p in with_id[first:] if blocks[p].kind == TOOL_USE]
    if not exempt_skills:
        return ids
    skill_ids = {blocks[p].tool_id for p in with_id[bisect_left(with_id, tr.system_end) :] if blocks[p].skill}
    return [i for i in ids if i not in skill_ids] if skill_ids else ids


def drop_tool_pairs(view: View, ids: set[str], cause: str = "trim") -> Edit | None:
    """Remove whole tool_use/tool_result pairs named by `ids` (C-5), each result with the images
    that belong to it: those right after it in its message (traces/FORMAT.md "An image that
    belongs to a tool result ... follows the tool_result"), which would otherwise stay behind
    as images no call explains. Prose and other blocks stay; a message left empty disappears."""
    if not ids:
        return None
    tr = view.tr
    msgs = tr.messages
    blocks = tr.blocks
    with_id = tr.block_index(_with_tool_id)
    # the messages holding a block of the pairs, from the index of the blocks that carry a tool id
    # (an image attached to a dropped result is in the result's message)
    touched = sorted({tr.message_at(p) for p in with_id[bisect_left(with_id, _first_block(view)) :]
                      if blocks[p].tool_id in ids})  # fmt: skip
    if not touched:
        return None
    first = touched[0]
    out = list(msgs[first:])
    for i in reversed(touched):  # from the end, so that removing a message shifts no index still to visit
        m = msgs[i]
        kept = _without_pairs(m.blocks, ids)
        if not kept:
            del out[i - first]
        elif len(kept) < len(m.blocks):
            out[i - first] = Message.of(m.role, kept, m.tag, m.pinned)
    return Edit(first, tuple(out), cause, len(ids))


def _without_pairs(blocks: tuple[Block, ...], ids: set[str]) -> tuple[Block, ...]:
    """`blocks` without the tool_use/tool_result blocks of `ids` and the images attached to
    those results (the run of images directly after a dropped result)."""
    kept: list[Block] = []
    attached = False  # inside the run of images that follows a dropped tool_result
    for b in blocks:
        if b.kind in (TOOL_USE, TOOL_RESULT) and b.tool_id in ids:
            attached = b.kind == TOOL_RESULT
            continue
        if attached and b.is_image:
            continue
        attached = False
        kept.append(b)
    return tuple(kept)


def trim_to_last(view: View, keep: int) -> Edit | None:
    """C-5: trim the transcript to the last `keep` tool calls, oldest pairs first."""
    ids = tool_calls(view)
    if len(ids) <= keep:
        return None
    return drop_tool_pairs(view, set(ids[: len(ids) - keep]))


def clean_boundary(msgs: list[Message], k: int, floor: int) -> int:
    """Move k back until messages[k] does not answer tool calls of the part before it."""
    while floor < k < len(msgs) and msgs[k].has_tool_result:
        k -= 1
    return k


def carry_skills(older: list[Message]) -> tuple[list[Message], tuple[Message, ...]]:
    """C-8: split skill tool pairs out of `older` (carried verbatim); returns (to summarize, carried)."""
    ids = {b.tool_id for m in older if m.marked for b in m.blocks if b.skill and b.tool_id}
    if not ids:
        return older, ()
    uses: list[Block] = []
    results: list[Block] = []
    rest: list[Message] = []
    for m in older:
        keep = [
            b
            for b in m.blocks
            if not (b.tool_id in ids and b.kind in (TOOL_USE, TOOL_RESULT)) and not b.skill
        ]
        for b in m.blocks:
            if b.skill or (b.tool_id in ids and b.kind in (TOOL_USE, TOOL_RESULT)):
                (uses if b.kind == TOOL_USE else results).append(b)
        if keep:
            rest.append(m if len(keep) == len(m.blocks) else Message.of(m.role, tuple(keep), m.tag, m.pinned))
    carried: list[Message] = []
    if uses:
        carried.append(Message.of("assistant", tuple(uses), "skill"))
    if results:
        carried.append(Message.of("user", tuple(results), "skill"))
    return rest, tuple(carried)


def carry_images(msgs: list[Message]) -> tuple[list[Message], tuple[Message, ...]]:
    """C-9: split the images out of `msgs` (earlier summaries dropped, C-10) into one user message
    carried verbatim; returns (the rest, to summarize; the carried images)."""
    rest: list[Message] = []
    images: list[Block] = []
    for m in msgs:
        if is_summary(m):
            continue
        if not m.images:
            rest.append(m)
            continue
        images.extend(b for b in m.blocks if b.is_image)
        kept = tuple(b for b in m.blocks if not b.is_image)
        if kept:
            rest.append(Message.of(m.role, kept, m.tag, m.pinned))
    return rest, ((Message.of("user", tuple(images), "image"),) if images else ())


# ---------------------------------------------------------------- C's tiered compaction
@register("compaction", "c-tiers")
@dataclass(frozen=True)
class CTiers(CompactionDefaults):
    """Harness C's auto-compaction tiers, checked before every model call (C-5, C-6, C-17).

    Thresholds are fractions of the current model's window (C-1, C-19), or of the preset's
    budget below it (`view.budget`, policies/budget.py). In `fast` mode tier 1
    (≥50 %) trims to the last 20 tool calls and tier 2 (≥80 %) to the last 10; tier 3 (≥90 %)
    summarizes in every mode. The summary keeps a recent tail (C-7), carries skills (C-8),
    keeps everything from the first image on (C-9), drops an earlier summary (C-10), does
    nothing with fewer than 5 older messages (C-11) and lists scratchpad files (C-13).
    """

    mode: str = "default"  # C-17: default (summarize only) | fast (all three tiers)
    tier1: Fraction = 0.50  # C-5
    tier1_keep: int = 20  # C-5
    tier2: Fraction = 0.80  # C-5
    tier2_keep: int = 10  # C-5
    tier3: Fraction = 0.90  # C-6
    tail_tokens: Tokens = 30_000  # C-7: roughly the last 30k tokens
    tail_min_messages: int = 3  # C-7
    min_older: int = 5  # C-11: fewer older messages -> nothing to summarize
    keep_images: bool = True  # C-9
    exempt_skills: bool = True  # C-8
    bytes_per_token: float = 4.0  # the harness's own rate for the tail (as c-usage; assumed)
    image_tokens: Tokens = 1500  # C-4
    summary_bytes: int = 8_000  # what the summarizer writes (assumed; the seed gives no size)
    instruction_bytes: int = 2_500  # the summarize instruction (assumed)
    manifest_entry_bytes: int = 80  # C-13: name + metadata of one scratchpad file (assumed)
    summary_input: str = "older"  # the summarizer sees the older part after tools+system (assumed)
    summary_calls: int = 1
    fallback_model: str = "claude-haiku-4-5"  # C-11: a second model (which one is assumed)
    trim_fallback: bool = True  # C-11: tier-2 trim when no summary can be produced
    reactive: bool = True  # C-18
    backoff: bool = True  # C-12
    min_reclaim: Fraction = 0.02  # C-12 "almost nothing": < 2 % of the window (assumed)
    regrow: Fraction = 0.05  # C-12: wait until the estimate grows by 5 % of the window (assumed)
    switch_summarize: bool = True  # C-19
    reattach_files: int = 0  # (Claude Code only)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.summary_input not in ("full", "older", "text"):
            raise ValueError("summary_input must be full, older or text")

    # -- C-2, C-3: where auto-compaction fires
    def threshold(self, view: View) -> int:
        return int(self.tier3 * view.budget)

    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None:
        """The highest tier whose threshold the estimate has passed (C-5, C-6; mode read live, C-17)."""
        keep = self._tier(view, estimate, mode)
        if keep is None:
            return None
        if keep < 0:
            return Summarize("tier3")
        edit = trim_to_last(view, keep)
        return Trim(edit) if edit is not None else None

    def acts(self, view: View, estimate: int, mode: str | None = None) -> bool:
        """Whether `decide` would act, without making the trim's edit: a trim acts when more than
        the tool calls it keeps exist (`trim_to_last`)."""
        keep = self._tier(view, estimate, mode)
        return keep is not None and (keep < 0 or len(tool_calls(view)) > keep)

    def _tier(self, view: View, estimate: int, mode: str | None) -> int | None:
        """-1 for tier 3, the tool calls the passed trim tier keeps, or None below every tier."""
        frac = estimate / view.budget if view.budget else 0.0
        if frac >= self.tier3:
            return -1
        if (mode or self.mode) != "fast":
            return None
        for level, keep in ((self.tier2, self.tier2_keep), (self.tier1, self.tier1_keep)):
            if frac >= level:
                return keep
        return None

    def fallback_trim(self, view: View) -> Edit | None:
        """C-11: the tier-2 trim used when no summary can be produced."""
        return trim_to_last(view, self.tier2_keep)

    # -- C-7, C-9, C-10, C-11: what the summary replaces
    def tail_boundary(self, view: View) -> int:
        """C-7: the first message of the recent tail (roughly the last 30k tokens, never fewer
        than the last 3 messages, split at a clean turn boundary)."""
        msgs = view.tr.messages
        start = view.preparation_messages
        k = max(start, len(msgs) - self.tail_min_messages)
        acc = sum(msg_estimate(m, self.bytes_per_token, self.image_tokens) for m in msgs[k:])
        while k > start and acc < self.tail_tokens:
            k -= 1
            acc += msg_estimate(msgs[k], self.bytes_per_token, self.image_tokens)
        return clean_boundary(msgs, k, start)

    def boundary(self, view: View) -> int:
        """C-9: the keep-boundary moves back to the first image before the tail, so that image and
        everything after it survive as-is."""
        msgs = view.tr.messages
        start = view.preparation_messages
        k = self.tail_boundary(view)
        if self.keep_images:  # the message of the first image after the pinned exchange, if before k
            tr = view.tr
            at = bisect_left(tr.image_pos, _first_block(view))
            first_img = tr.message_at(tr.image_pos[at]) if at < len(tr.image_pos) else k
            if first_img < k:
                k = clean_boundary(msgs, first_img, start)
        return k

    def _older(self, view: View, end: int) -> tuple[list[Message], tuple[Message, ...]]:
        """The messages a summary of [prep, end) replaces, and those carried verbatim (C-8)."""
        older = [m for m in view.tr.messages[view.preparation_messages : end] if not is_summary(m)]  # C-10
        if self.exempt_skills:
            return carry_skills(older)
        return older, ()

    def plan(self, view: View, reason: str = "auto") -> SummaryPlan | None:
        """What tier 3 summarizes. C-9 first moves the boundary back to the first image. When that
        leaves nothing to summarize (C-11) because an image an earlier pass kept now sits right
        after the summary, the summary would never reclaim anything again and the session could
        only overflow, which the seed rules out ("overflow (never reached)"; C-18: the recovery
        path "stays rare"; an image costs "~1.5k tokens" and is "never summarized away"). So the
        images of the older part are then carried verbatim, as skills are (C-8), and the older
        text up to the tail (C-7) is summarized: no image is ever summarized."""
        start = view.preparation_messages
        end = self.boundary(view)
        older, carried = self._older(view, end)
        shown: tuple[Message, ...] = ()
        if len(older) < self.min_older and self.keep_images:
            tail = self.tail_boundary(view)
            if tail > end:
                text, images = carry_images(list(view.tr.messages[start:tail]))
                older, skills = carry_skills(text) if self.exempt_skills else (text, ())
                if len(older) >= self.min_older:
                    end, carried = tail, (*skills, *images)
                    shown = tuple(m for m in view.tr.messages[start:tail] if not is_summary(m))
        if len(older) < self.min_older:
            return None  # C-11
        files = sum(1 for m in older for b in m.blocks if b.kind == TOOL_USE and b.name == "Write")
        return SummaryPlan(start, end, tuple(older), carried, files, reason, shown)

    def summary_size(self, plan: SummaryPlan) -> int:
        """Bytes of the summary message: the brief plus the scratchpad manifest (C-13)."""
        return self.summary_bytes + plan.manifest_files * self.manifest_entry_bytes

    def rules(self) -> CompactionRules:
        return CompactionRules(
            self.mode,
            self.tier2,
            self.tier3,
            self.reactive,
            self.backoff,
            self.min_reclaim,
            self.regrow,
            self.switch_summarize,
            self.trim_fallback,
        )

    def summary_request(self) -> SummaryRequest:
        calls = max(1, self.summary_calls)
        return SummaryRequest(self.instruction_bytes, self.summary_input, 0, True, calls, self.fallback_model)

    def rebuild_summary(
        self, view: View, plan: SummaryPlan, summary: Message, extra: tuple[Message, ...] = ()
    ) -> Edit:
        if extra:
            return super().rebuild_summary(view, plan, summary, extra)
        return self.rebuild(view, plan, summary)

    def rebuild(self, view: View, plan: SummaryPlan, summary: Message) -> Edit:
        """C-6, C-10: the summary replaces the older messages; carried skills and the tail follow."""
        tail = tuple(view.tr.messages[plan.end :])
        return Edit(plan.first, (summary, *plan.carried, *tail), "compaction")
