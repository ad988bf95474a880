"""The incremental chain equals a full recomputation after any sequence of appends and edits."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import replace
from itertools import accumulate

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.sim.core.chain import CHAIN_SEED, chain, prefix_term
from ctxbench.sim.core.content import Block, Message, digest64
from ctxbench.sim.core.transcript import Transcript


def _block(i: int, image: bool = False, kind: str = "text", pinned: bool = False) -> Block:
    kind = "image" if image else kind
    return Block(kind, "user", 0 if image else i, i % 97 + 1, digest64(str(i).encode()), pinned=pinned)


def _full(tr: Transcript) -> tuple[list[int], list[int], list[int]]:
    h, hashes, cum, t, imgs, rank = CHAIN_SEED, [], [], 0, [CHAIN_SEED], 0
    for b in tr.blocks:
        if not b.deferred:  # a deferred tool moves no prefix
            h += prefix_term(rank, b.digest)
            rank += 1
        t += b.tokens
        hashes.append(h)
        cum.append(t)
        if b.kind == "image":
            imgs.append(chain(imgs[-1], b.digest))
    return hashes, cum, imgs


def vars_of(tr: Transcript) -> dict[str, object]:
    """Every field of a transcript (its running indexes as lists); a compiled Transcript
    (sim/core/native.py) lists its fields in `__mypyc_attrs__` instead of an instance `__dict__`."""
    names = getattr(type(tr), "__mypyc_attrs__", None) or vars(tr)
    fields = {k: getattr(tr, k) for k in names if k != "__dict__"}
    return {k: v for k, v in fields.items() if k not in ("_block_indexes", "_message_sums")} | {
        "indexes": list(tr._block_indexes.values()),
        "sums": list(tr._message_sums.values()),
    }


def _odd_tokens(b: Block) -> bool:
    return b.tokens % 2 == 1


def _blocks_of(m: Message) -> int:
    return len(m.blocks)


def _tokens_of(m: Message) -> int:
    return m.tokens


ops = st.lists(
    st.tuples(
        st.sampled_from(["append", "replace", "swap", "tail", "pop", "system", "tools"]),
        st.integers(0, 10_000),
        st.integers(1, 4),
        st.booleans(),
        st.sampled_from(["", "thinking", "pinned-block", "pinned-message"]),
    ),
    max_size=40,
)


@given(operations=ops)
@settings(max_examples=300, deadline=None)
def test_incremental_chain_matches_full_recomputation(
    operations: list[tuple[str, int, int, bool, str]],
) -> None:
    """Hashes, sums, the image chain and the running indexes (unpinned images, thinking, the
    indexes a component asks for) equal a recomputation from the blocks; a fork plus the rest of
    the messages equals the original."""
    _check_operations(operations)


def _check_operations(operations: list[tuple[str, int, int, bool, str]]) -> None:
    tr = Transcript([_block(1)], [_block(2, image=True)])
    odd = tr.block_index(_odd_tokens)  # asked before the edits: kept up to date by them
    tr.message_sums(_tokens_of)
    for op, seed, nblocks, image, extra in operations:
        blocks = [
            _block(seed + k, image and k == 0, "thinking" if extra == "thinking" and k == 1 else "text",
                   pinned=extra == "pinned-block")
            for k in range(nblocks)
        ]  # fmt: skip
        msg = Message.of("user", blocks, pinned=extra == "pinned-message")
        if op == "system":  # a later system event: keeps the first system block, changes the rest
            tr.replace_system([tr.blocks[tr.tools_end], *blocks])
        elif op == "tools":  # a later tools event, some of the tools deferred
            tr.replace_tools(
                [replace(b, kind="tool_def", deferred=image and k > 0) for k, b in enumerate(blocks)]
            )
        elif op == "append" or not tr.messages:
            tr.append(msg)
        elif op == "replace":
            m = seed % len(tr.messages)  # keeps one old message, then several new ones
            tr.replace_from(m, [*tr.messages[m : m + 1], msg, Message.of("user", [_block(seed + 7)])])
        elif op == "tail":  # the last messages kept, those before them dropped (a rolling window,
            m = seed % len(tr.messages)  # a trim), a new one in front of them with `image` (a summary)
            rest = tr.messages[m:]
            k = 1 + seed % len(rest)
            out = [msg, *rest[k:]] if image else rest[k:]
            ref = deepcopy(tr)  # the same edit made by removing the rest and adding it again
            ref.truncate_messages(m)
            ref._add(out)
            tr.replace_from(m, out, kept=len(rest) - k if seed % 2 else 0)  # Edit.kept, when known
            assert vars_of(tr) == vars_of(ref)
        elif op == "swap":  # every nblocks-th message from m on with one block swapped (masking,
            m = seed % len(tr.messages)  # image eviction); a thinking block swapped takes the other path
            out = list(tr.messages[m:])
            for j in range(0, len(out), nblocks):
                swapped = list(out[j].blocks)
                swapped[seed % len(swapped)] = _block(seed + 13 + j, image, pinned=extra == "pinned-block")
                out[j] = Message.of(out[j].role, swapped, out[j].tag, out[j].pinned)
            ref = deepcopy(tr)  # the same edit made by removing the rest and adding it again
            ref.truncate_messages(m)
            ref._add(out)
            known = [m + j for j in range(0, len(out), nblocks)] if seed % 2 else []  # Edit.swapped
            tr.replace_from(m, out, known)
            assert vars_of(tr) == vars_of(ref)
        else:
            tr.pop_message()
        hashes, cum, imgs = _full(tr)
        assert tr.hashes == hashes
        assert tr.cum_tokens == cum
        assert tr.img_hashes == imgs
        assert tr.image_pos == [p for p, b in enumerate(tr.blocks) if b.kind == "image"]
        text = [0 if b.kind == "image" else b.nbytes for b in tr.blocks]
        assert [tr.bytes_before(p) for p in range(len(tr) + 1)] == [sum(text[:p]) for p in range(len(tr) + 1)]
        assert [tr.images_before(p) for p in range(len(tr) + 1)] == [
            sum(1 for b in tr.blocks[:p] if b.kind == "image") for p in range(len(tr) + 1)
        ]
        assert tr.msg_starts == sorted(tr.msg_starts)
        assert tr.first_deferred == next((p for p, b in enumerate(tr.blocks) if b.deferred), -1)
        unpinned = [
            p
            for m, msg in enumerate(tr.messages)
            for p, b in enumerate(msg.blocks, tr.msg_starts[m])
            if b.kind == "image" and not (b.pinned or msg.pinned)
        ]
        assert tr.unpinned_imgs == unpinned
        assert tr.thinking_msgs == [m for m, msg in enumerate(tr.messages) if msg.thinking]
        copy = tr.fork(seed % (len(tr.messages) + 1))
        bulk = tr.fork(len(copy.messages))  # the same messages added by one extend
        for msg in tr.messages[len(copy.messages) :]:
            copy.append(msg)
        bulk.extend(tr.messages[len(bulk.messages) :])
        assert (copy.hashes, copy.cum_tokens, copy.img_hashes) == (tr.hashes, tr.cum_tokens, tr.img_hashes)
        assert vars_of(bulk) == vars_of(copy)
        assert copy.unpinned_imgs == tr.unpinned_imgs
        assert odd == [p for p, b in enumerate(tr.blocks) if _odd_tokens(b)]
        assert tr.message_sums(_blocks_of) == list(accumulate(len(m.blocks) for m in tr.messages))
        assert tr.message_sums(_tokens_of) == list(accumulate(m.tokens for m in tr.messages))
        assert copy.block_index(_odd_tokens) == odd
        assert copy.message_sums(_blocks_of) == tr.message_sums(_blocks_of)


def test_edit_marks_first_changed_block_and_keeps_identical_messages() -> None:
    tr = Transcript([_block(1)], [_block(2)])
    msgs = [Message.of("user", [_block(10 + i)]) for i in range(5)]
    for m in msgs:
        tr.append(m)
    tr.mark_sent()
    new = Message.of("user", [_block(99)])
    tr.replace_from(1, [msgs[1], msgs[2], new])
    assert tr.changed_from == tr.msg_starts[3]  # messages 1 and 2 were kept as they were
    assert len(tr.messages) == 4


def test_added_counters_never_shrink_on_edits() -> None:
    tr = Transcript()
    tr.append(Message.of("user", [_block(5), _block(6, image=True)]))
    before = (tr.added_bytes, tr.added_images)
    tr.replace_from(0, [Message.of("user", [_block(7)])])
    assert (tr.added_bytes, tr.added_images) == before  # removed content is never subtracted (H-13)


@given(st.lists(st.lists(st.integers(0, 12), max_size=8), min_size=1, max_size=6))
@settings(max_examples=100, deadline=None)
def test_a_transcript_edited_to_new_messages_forks_as_a_new_one(runs: list[list[int]]) -> None:
    """One transcript brought to each list of messages by `replace_from(0, ...)` (what a harness's
    summary request without tools is copied from, sim/harness/summary_calls.py) forks into the same
    transcript, field by field, as appending those messages to a new one."""
    pool = [Message.of("user", [_block(i), _block(i + 50, image=i % 3 == 0)]) for i in range(13)]
    system = [_block(2)]
    base = Transcript((), system)
    for run in runs:
        msgs = [pool[i] for i in run]
        base.replace_from(0, msgs)
        fresh = Transcript((), system)
        fresh.extend(msgs)
        assert vars_of(base.fork()) == vars_of(fresh)


def test_an_edit_keeping_the_last_messages_moves_them() -> None:
    """A rolling window and a summary before the recent messages (sim/core/transcript_edits.py): the
    kept messages, with thinking blocks, images and pinned images among them, move; the result
    equals the rest removed and added again, field by field."""
    tr = Transcript([_block(1)], [_block(2)])
    tr.block_index(_odd_tokens)
    tr.message_sums(_tokens_of)
    for i in range(8):
        blocks = [_block(10 * i), _block(10 * i + 1, kind="thinking" if i % 2 else "text"),
                  _block(10 * i + 2, image=True, pinned=i % 3 == 0)]  # fmt: skip
        tr.append(Message.of("assistant" if i % 2 else "user", blocks))
    summary = Message.of("user", [_block(99)])
    for out in (tr.messages[5:], [summary, *tr.messages[6:]]):
        ref = deepcopy(tr)
        ref.truncate_messages(1)
        ref._add(out)
        tr.replace_from(1, out)
        assert vars_of(tr) == vars_of(ref)
        assert tr.thinking_msgs == [m for m, msg in enumerate(tr.messages) if msg.thinking]
