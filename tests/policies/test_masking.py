"""The masking components read the transcript's running indexes; what they decide equals a scan of
every message (the plain reading of their rules), also after their own edits."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.policies.condensers import events_of
from ctxbench.policies.masking import MaskToolResults, RecentEvents
from ctxbench.policies.tiers import clean_boundary
from ctxbench.policies.view import Edit, View, text_block
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript

F = BlockFactory()


def _conversation(kinds: list[str]) -> Transcript:
    tr = Transcript((F.tool_def("Read", None, 300),), (F.text("system", None, 2000, key="sys"),))
    for i, k in enumerate(kinds):
        if k == "prompt":
            tr.append(Message.of("user", (F.text("user", None, 200 + i, key=f"p{i}"),), "prompt"))
            continue
        name = "Skill" if k == "skill" else "Write" if k == "write" else "Read"
        use = F.text("assistant", None, 80, key=f"u{i}", kind="tool_use", tool_id=f"t{i}", name=name)
        tr.append(Message.of("assistant", (use,), "reply"))
        res = F.text("user", None, 400 * (1 + i % 5), key=f"r{i}", kind="tool_result", tool_id=f"t{i}",
                     skill=k == "skill")  # fmt: skip
        shot = (F.image("user", 800, 600, 5000, f"s{i}"),) if k == "shot" else ()
        tr.append(Message.of("user", (res, *shot), "tool_results"))
    return tr


def _masked_by_scan(policy: MaskToolResults, view: View) -> set[tuple[int, int]] | None:
    """The (message, block) pairs the rules mask, read from every message (None: no edit)."""
    tr = view.tr
    if policy.trigger_tokens:
        full = tr.total_tokens if tr.added_tokens == 0 else tr.tokens_before(tr.system_end) + tr.added_tokens
        if (full if policy.measure == "full" else tr.total_tokens) < policy.trigger_tokens:
            return None
    msgs = tr.messages
    names = {b.tool_id: b.name for m in msgs for b in m.blocks if b.kind == "tool_use"}
    protect_from = len(msgs)
    if policy.keep_turns:
        replies = [i for i, m in enumerate(msgs) if m.role == "assistant"]
        protect_from = replies[-policy.keep_turns] if len(replies) >= policy.keep_turns else 0
    if policy.skip_user_turns:
        users = [i for i, m in enumerate(msgs) if m.role == "user" and not m.has_tool_result]
        k = policy.skip_user_turns
        protect_from = min(protect_from, users[-k] if len(users) >= k else 0)
    first = view.preparation_messages
    results = [(m, i, b) for m in range(first, len(msgs)) for i, b in enumerate(msgs[m].blocks)
               if b.kind == "tool_result"]  # fmt: skip
    kept = protected = total = 0
    out = set()
    for m, i, b in reversed(results):
        if b.placeholder:
            continue
        est = math.ceil(b.nbytes / policy.bytes_per_token)
        if m >= protect_from or kept < policy.keep_tool_uses or protected < policy.protect_tokens:
            kept += 1
            protected += est
            continue
        if (policy.exempt_skills and b.skill) or names.get(b.tool_id, "") in policy.exclude_tools:
            continue
        out.add((m, i))
        total += est
    return out if out and total >= max(policy.min_tokens, 1) else None


def _masked(edit: Edit | None, view: View) -> set[tuple[int, int]] | None:
    if edit is None:
        return None
    msgs = view.tr.messages
    return {
        (edit.first + j, i)
        for j, m in enumerate(edit.messages)
        for i, b in enumerate(m.blocks)
        if b.placeholder and not msgs[edit.first + j].blocks[i].placeholder
    }


kinds = st.lists(st.sampled_from(["prompt", "read", "read", "write", "skill", "shot"]), max_size=40)


@given(
    kinds,
    st.builds(
        MaskToolResults,
        keep_turns=st.integers(0, 6),
        keep_tool_uses=st.integers(0, 8),
        protect_tokens=st.sampled_from([0, 0, 100, 500, 3000]),
        skip_user_turns=st.integers(0, 2),
        trigger_tokens=st.sampled_from([0, 0, 5000]),
        measure=st.sampled_from(["full", "current"]),
        min_tokens=st.sampled_from([0, 1, 800, 5000]),
        exempt_skills=st.booleans(),
        exclude_tools=st.sampled_from([(), ("Write",)]),
    ),
    st.integers(0, 3),
)
@settings(max_examples=150, deadline=None)
def test_masking_matches_a_scan_of_every_message(
    kinds: list[str], policy: MaskToolResults, prep: int
) -> None:
    tr = _conversation(kinds)
    view = View(tr, None, 200_000, 200_000, min(prep, len(tr.messages)), -1, True)
    for _ in range(3):  # the rules again after each of their own edits
        edit = policy.plan(view)
        assert _masked(edit, view) == _masked_by_scan(policy, view)
        if edit is None:
            break
        tr.replace_from(edit.first, edit.messages)


def _recent_by_scan(policy: RecentEvents, view: View) -> Edit | None:
    """RecentEvents' rule with every message's events counted by a scan."""
    msgs = view.tr.messages
    if sum(events_of(m) for m in msgs) <= policy.max_events:
        return None
    head, ev = 0, 0
    while head < len(msgs) and ev < policy.keep_first:
        ev += events_of(msgs[head])
        head += 1
    k, acc = len(msgs), 0
    while k > head and acc + events_of(msgs[k - 1]) <= policy.max_events - policy.keep_first:
        k -= 1
        acc += events_of(msgs[k])
    k = clean_boundary(msgs, k, head)
    while k < len(msgs) and msgs[k].has_tool_result:
        k += 1
    return None if k <= head else Edit(head, tuple(msgs[k:]), "trim", k - head)


@given(kinds, st.integers(0, 3), st.integers(1, 30))
@settings(max_examples=100, deadline=None)
def test_recent_events_matches_a_scan(kinds: list[str], keep_first: int, max_events: int) -> None:
    tr = _conversation(kinds)
    view = View(tr, None, 200_000, 200_000, 0, -1, True)
    policy = RecentEvents(keep_first, max_events)
    for _ in range(3):
        edit = policy.plan(view)
        assert edit == _recent_by_scan(policy, view)
        if edit is None:
            break
        tr.replace_from(edit.first, edit.messages)


def test_a_placeholder_for_a_tool_result_is_the_block_the_tokenizer_makes() -> None:
    """text_block makes a placeholder once per conversation and relabels it per tool call: the
    same block (digest, tokens, flags) as the factory makes for that call."""
    view = View(_conversation(["read"]), None, 200_000, 200_000, 0, -1, True, factory=F)
    like = view.tr.messages[1].blocks[0]
    for tid in ("t1", "t2"):
        made = text_block(view, like, "[cleared]", kind="tool_result", tool_id=tid)
        assert made == F.text(like.role, "[cleared]", kind="tool_result", placeholder=True, tool_id=tid)
