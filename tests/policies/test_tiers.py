"""C's tier components on hand-built conversations (C-5..C-11, C-13, C-17)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.policies.contracts import Summarize, Trim
from ctxbench.policies.tiers import (
    CTiers,
    is_reply,
    is_user_turn,
    msg_estimate,
    nth_last,
    tool_calls,
    trim_to_last,
)
from ctxbench.policies.view import Edit, View
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript

F = BlockFactory()


def text(role: str, nbytes: int, key: str, summary: bool = False) -> Message:
    return Message.of(role, (F.text(role, None, nbytes, key=key, summary=summary),), "x")


def pair(
    i: int, result_bytes: int = 400, name: str = "Read", skill: bool = False, say: int = 0
) -> list[Message]:
    blocks = [F.text("assistant", None, say, key=f"say{i}")] if say else []
    blocks.append(F.text("assistant", None, 80, key=f"in{i}", kind="tool_use", tool_id=f"t{i}", name=name))
    res = F.text("user", None, result_bytes, key=f"out{i}", kind="tool_result", tool_id=f"t{i}", skill=skill)
    return [Message.of("assistant", tuple(blocks), "reply"), Message.of("user", (res,), "tool_results")]


def view(msgs: list[Message], window: int = 200_000) -> View:
    tr = Transcript((F.tool_def("Read", None, 500),), (F.text("system", None, 4000, key="sys"),))
    for m in msgs:
        tr.append(m)
    return View(tr, None, window, window, 0, -1, True)


def conv(n_pairs: int, **kw: object) -> list[Message]:
    msgs = [text("user", 300, "prompt")]
    for i in range(n_pairs):
        msgs += pair(i, **kw)  # type: ignore[arg-type]
    return msgs


def test_c5_trim_keeps_last_n_calls_and_all_prose() -> None:
    v = view(conv(30, say=200))
    edit = trim_to_last(v, 20)
    assert edit is not None and edit.cause == "trim" and edit.detail == 10
    v.tr.replace_from(edit.first, edit.messages)
    assert len(tool_calls(v)) == 20 and tool_calls(v)[0] == "t10"
    says = [b for m in v.tr.messages for b in m.blocks if b.kind == "text" and b.role == "assistant"]
    assert len(says) == 30  # prose survives
    assert trim_to_last(view(conv(20)), 20) is None  # only when more exist


def test_c5_a_trimmed_tool_result_takes_its_images_with_it() -> None:
    """An image read by a tool sits right after its tool_result in the same message (traces/FORMAT.md);
    trimming the pair drops it too. Images of kept results and images a user pasted stay."""
    msgs = [text("user", 300, "prompt")]
    for i in range(12):
        use = F.text("assistant", None, 80, key=f"in{i}", kind="tool_use", tool_id=f"t{i}", name="Read")
        res = F.text("user", None, 40, key=f"note{i}", kind="tool_result", tool_id=f"t{i}")
        blocks = [res, F.image("user", 1280, 800, 90_000, key=f"img{i}")]
        if i == 1:  # a second result in the same message, and an image pasted with a prompt
            blocks += [F.text("user", None, 40, key="x1", kind="tool_result", tool_id="tx"),
                       F.text("user", None, 60, key="paste"), F.image("user", 800, 600, 50_000, key="pasted")]
            use2 = F.text("assistant", None, 80, key="inx", kind="tool_use", tool_id="tx", name="Read")
            msgs.append(Message.of("assistant", (use, use2), "reply"))
        else:
            msgs.append(Message.of("assistant", (use,), "reply"))
        msgs.append(Message.of("user", tuple(blocks), "tool_results"))  # fmt: skip
    v = view(msgs)
    edit = trim_to_last(v, 5)  # 13 calls: drops t0, t1, tx, t2..t6; keeps t7..t11
    assert edit is not None
    v.tr.replace_from(edit.first, edit.messages)
    kept_ids = set(tool_calls(v))
    images = [b for m in v.tr.messages for b in m.blocks if b.is_image]
    results = {b.tool_id for m in v.tr.messages for b in m.blocks if b.kind == "tool_result"}
    assert results == kept_ids and len(kept_ids) == 5
    assert len(images) == 5 + 1  # one per kept result, and the pasted image after the user's text
    assert sum(m.images for m in v.tr.messages) == len(images)


def test_c5_c8_skill_pairs_are_never_trimmed() -> None:
    msgs = [text("user", 300, "p"), *pair(0, skill=True, name="Skill"), *conv(25)[1:]]
    v = view(msgs)
    edit = trim_to_last(v, 10)
    assert edit is not None
    v.tr.replace_from(edit.first, edit.messages)
    assert any(b.skill for m in v.tr.messages for b in m.blocks)


def test_c6_c17_default_mode_summarizes_only_at_90_percent() -> None:
    v = view(conv(30), window=10_000)
    c = CTiers()
    assert c.decide(v, 6_000) is None and c.decide(v, 8_500) is None
    assert c.decide(v, 9_000) == Summarize("tier3")
    fast1, fast2 = c.decide(v, 5_000, "fast"), c.decide(v, 8_000, "fast")
    assert isinstance(fast1, Trim) and fast1.edit.detail == 10  # tier 1 keeps 20 of 30
    assert isinstance(fast2, Trim) and fast2.edit.detail == 20  # tier 2 keeps 10
    assert c.decide(v, 4_900, "fast") is None
    assert c.decide(v, 9_500, "fast") == Summarize("tier3")


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(100, 60_000), min_size=8, max_size=40))
def test_c7_tail_is_30k_at_least_3_messages_and_clean(sizes: list[int]) -> None:
    msgs = [text("user", 300, "p")]
    for i, s in enumerate(sizes):
        msgs += pair(i, result_bytes=s)
    v = view(msgs)
    c = CTiers()
    k = c.boundary(v)
    tail = v.tr.messages[k:]
    assert len(tail) >= 3
    assert not v.tr.messages[k].has_tool_result or k == 0
    if k > 0:
        assert sum(msg_estimate(m, 4.0, 1500) for m in tail) >= 30_000


def test_c9_images_move_the_boundary_back() -> None:
    msgs = conv(40, result_bytes=8_000)
    img = F.image("user", 1280, 800, 100_000, "img")
    msgs[10] = Message.of("user", (*msgs[10].blocks, img), "tool_results")
    v = view(msgs)
    without = CTiers(keep_images=False).boundary(v)
    with_img = CTiers().boundary(v)
    assert without > 10 >= with_img
    assert any(m.images for m in v.tr.messages[with_img:])


def test_c8_c10_c11_c13_plan() -> None:
    c = CTiers(tail_tokens=1_000)
    summary = text("user", 5_000, "old-summary", summary=True)
    msgs = [summary, *pair(99, skill=True, name="Skill"), *conv(20, name="Write")[1:]]
    plan = c.plan(view(msgs))
    assert plan is not None
    assert all(not any(b.summary for b in m.blocks) for m in plan.older)  # C-10: not re-summarized
    assert [m.tag for m in plan.carried] == ["skill", "skill"]  # C-8: carried verbatim
    assert all(not b.skill for m in plan.older for b in m.blocks)
    assert plan.manifest_files > 0 and c.summary_size(plan) == 8_000 + 80 * plan.manifest_files  # C-13
    edit = c.rebuild(view(msgs), plan, text("user", 8_000, "new", summary=True))
    assert sum(1 for m in edit.messages if any(b.summary for b in m.blocks)) == 1  # C-10: replaced
    assert c.plan(view(conv(2))) is None  # C-11: fewer than 5 older messages


def test_c9_an_image_kept_by_an_earlier_pass_is_carried_not_a_wall() -> None:
    """C-9 after a first pass: the image it kept sits right after the summary, so moving the
    boundary back to it would leave nothing to summarize for the rest of the session (C-11) and
    the window could only overflow. The image is carried verbatim instead (as skills, C-8) and
    the older text is summarized; no image is ever summarized away."""
    msgs = [text("user", 8_000, "s0", summary=True), *conv(40, result_bytes=8_000)[1:]]
    img = F.image("user", 1280, 800, 100_000, "img")
    msgs[2] = Message.of("user", (*msgs[2].blocks, img), "tool_results")
    v = view(msgs)
    tiers = CTiers()
    assert tiers.boundary(v) <= 2  # the literal move: the summary and one pair before it
    plan = tiers.plan(v)
    assert plan is not None
    assert plan.end == tiers.tail_boundary(v) > 2
    assert not any(m.images for m in plan.older)  # never summarized
    assert [m.images for m in plan.carried] == [1]  # carried verbatim, in front of the tail
    assert plan.shown and plan.shown[1] is msgs[2]  # the summarizer sees the messages as they are
    edit = tiers.rebuild(v, plan, text("user", 8_000, "s1", summary=True))
    assert sum(m.images for m in edit.messages) == 1


def _trim_by_scan(v: View, keep: int) -> Edit | None:
    """C-5's trim read off every message: the pairs of the oldest calls beyond `keep`, each result
    with the images right after it; messages left empty disappear."""
    ids = tool_calls(v)
    drop = set(ids[: max(0, len(ids) - keep)])
    msgs = v.tr.messages
    first = v.preparation_messages
    touched = [i for i in range(first, len(msgs)) if any(b.tool_id in drop for b in msgs[i].blocks)]
    if not drop or not touched:
        return None
    out: list[Message] = []
    for m in msgs[touched[0] :]:
        kept, attached = [], False
        for b in m.blocks:
            if b.kind in ("tool_use", "tool_result") and b.tool_id in drop:
                attached = b.kind == "tool_result"
            elif not (attached and b.is_image):
                attached = False
                kept.append(b)
        if len(kept) == len(m.blocks):
            out.append(m)
        elif kept:
            out.append(Message.of(m.role, tuple(kept), m.tag, m.pinned))
    return Edit(touched[0], tuple(out), "trim", len(drop))


@given(
    st.lists(st.sampled_from(["prompt", "pair", "skill", "results", "shot", "two"]), max_size=30),
    st.integers(1, 6),
    st.integers(0, 3),
)
@settings(max_examples=80, deadline=None)
def test_indexed_queries_match_a_scan(kinds: list[str], n: int, prep: int) -> None:
    """The components' queries read from the transcript's running indexes (nth_last, tool_calls,
    the trim's edit) answer what a scan of every message answers, also after trims edit the
    transcript."""
    msgs: list[Message] = []
    for i, k in enumerate(kinds):
        if k == "prompt":
            msgs.append(text("user", 100 + i, f"p{i}"))
        elif k == "results":
            msgs.append(pair(i)[1])
        elif k == "shot":  # a result with its screenshot, then prose, in one message
            use, res = pair(i)
            shot = F.image("user", 640, 480, 9_000, f"shot{i}")
            msgs += [use, Message.of("user", (*res.blocks, shot, F.text("user", None, 50, key=f"n{i}")), "x")]
        elif k == "two":  # two calls in one reply, their results in one message
            (u1, r1), (u2, r2) = pair(i), pair(1000 + i)
            msgs += [Message.of("assistant", u1.blocks + u2.blocks, "reply"),
                     Message.of("user", r1.blocks + r2.blocks, "tool_results")]  # fmt: skip
        else:
            msgs += pair(i, skill=k == "skill", name="Skill" if k == "skill" else "Read")
    v = view(msgs)
    v = View(v.tr, None, v.budget, v.window, min(prep, len(msgs)), -1, True)
    for _ in range(2):
        tr = v.tr
        for pick in (is_reply, is_user_turn):
            picked = [i for i, m in enumerate(tr.messages) if pick(m)]
            for first in (0, min(prep, len(tr.messages))):
                since = [i for i in picked if i >= first]
                assert nth_last(tr, n, pick, first) == (since[-n] if len(since) >= n else first)
        skill_ids = {b.tool_id for m in tr.messages for b in m.blocks if b.skill and b.tool_id}
        scanned = [
            b.tool_id
            for m in tr.messages[v.preparation_messages :]
            for b in m.blocks
            if b.kind == "tool_use" and b.tool_id not in skill_ids
        ]
        assert tool_calls(v) == scanned
        tiers = CTiers(mode="fast", tier1_keep=n, tier2_keep=2)
        for frac in (0.3, 0.6, 0.85, 0.95):  # acts answers what decide does, without the edit
            est = int(frac * v.budget)
            assert tiers.acts(v, est) == (tiers.decide(v, est) is not None)
        edit = trim_to_last(v, 2)
        assert edit == _trim_by_scan(v, 2)
        if edit is None:
            break
        tr.replace_from(edit.first, edit.messages)
