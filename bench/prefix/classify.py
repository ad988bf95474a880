"""Name one break found by bench/prefix/check.py: where it is, its class (check.py's docstring lists
them), whether a declaration or the log itself (recognise.py) explains it, and what it changed and
costs (culprit.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.bench.prefix.breaks import DECLARED_EDITS, Break
from ctxbench.bench.prefix.culprit import content_key, dollars, first_field, hint
from ctxbench.bench.prefix.recognise import Recognised, break_tokens, changed_system_fields, has_tools
from ctxbench.bench.prefix.request_log import LBlock, LoggedRequest

DIFF_CONTEXT = 24  # bytes of context shown on each side of a divergence
# what a simulated producer declares its summarizer calls as (sim/core/records.py `kind`): the
# harness's own compaction request, on a side branch by construction
SUMMARY_KINDS = ("summary", "summary_text")


@dataclass
class Context:
    """What classifying a break needs to know about the whole log."""

    reqs: list[LoggedRequest]
    extends: dict[int, list[int]]  # parent -> later requests that contain it whole
    main: set[int]  # the requests the conversation goes on from
    lasts: set[int]  # the last request of each session/model group
    seen: Recognised | None = None
    grown: set[int] = field(default_factory=set)  # continued past a static edit (its messages kept)


@dataclass
class _Pos:
    seg: str
    msg: int | None
    blk: int | None
    off: int | None
    ob: LBlock | None
    nb: LBlock | None
    old: str
    new: str


def _snip(p: bytes, at: int) -> str:
    s = p[max(0, at - DIFF_CONTEXT) : at + DIFF_CONTEXT].decode("utf-8", "replace")
    return (
        ("…" if at > DIFF_CONTEXT else "")
        + s.replace("\n", "\\n")
        + ("…" if at + DIFF_CONTEXT < len(p) else "")
    )


def _first_diff(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _position(r: LoggedRequest, ob: LBlock | None, nb: LBlock | None) -> _Pos:
    if nb is None:  # the request is a strict prefix of its parent
        return _Pos("end", r.n_messages - 1, None, None, ob, None, _snip(ob.payload, 0) if ob else "", "")
    off = _first_diff(ob.payload, nb.payload) if ob is not None and ob.segment == nb.segment else 0
    seg, msg, blk = nb.segment, nb.message, nb.index
    if ob is not None and ob.segment != nb.segment and ob.segment != "messages":
        seg, msg, blk = ob.segment, ob.message, ob.index  # a static block was removed
    old = _snip(ob.payload, off) if ob is not None else ""
    return _Pos(seg, msg, blk, off, ob, nb, old, _snip(nb.payload, off))


def _payload_bytes(r: LoggedRequest, k: int) -> int:
    return sum(len(b.payload) for b in r.blocks[k:])


def _truncated_side_shape(r: LoggedRequest, msg: int | None) -> bool:
    """`r` = a prefix of its parent + one new user message (a summary instruction over the older
    part of the conversation), diverging only at that last message."""
    return msg is not None and msg == r.n_messages - 1 and bool(r.blocks) and r.blocks[-1].role == "user"


def _base_class(ctx: Context, i: int, p: int, k: int, at: _Pos, since: str) -> str:
    r, par = ctx.reqs[i], ctx.reqs[p]
    leaf = not ctx.extends.get(i) and i not in ctx.lasts and i not in ctx.grown
    branch = leaf or i not in ctx.main  # a side branch: the conversation does not go on from it
    own, seg, msg = r.declared, at.seg, at.msg
    continued = any(j > i for j in ctx.extends.get(p, ()))
    if seg in ("tools", "system"):
        return "side_request" if branch else "static_prefix_edit"
    if "compaction" in own:
        return "reset_after_compaction"
    if not own and (
        (branch and (continued or msg == 0)) or (leaf and seg != "end" and _truncated_side_shape(r, msg))
    ):
        return "side_request"  # never continued: a helper call or a summarizer
    if "compaction" in since:
        return "reset_after_compaction"  # a compaction since the parent (an older one) was sent
    if msg == 0 or (
        seg != "end"
        and r.n_messages < par.n_messages
        and msg is not None
        and msg <= max(3, par.n_messages // 4)
        and _payload_bytes(r, k) * 2 < _payload_bytes(par, k)
    ):
        return "reset_after_compaction"  # a new, shorter conversation on the same static prefix
    if seg == "end" or (msg is not None and msg >= par.n_messages - 1):
        return "tail_edit"
    return "mid_conversation_edit"


def _recognised(
    ctx: Context, i: int, p: int, at: _Pos, cls: str, explained: bool, declared: str
) -> tuple[str, bool, str, str]:
    """What the log itself shows (recognise.py): (class, explained, declared, note)."""
    r, par, seen, own = ctx.reqs[i], ctx.reqs[p], ctx.seen, ctx.reqs[i].declared
    note = ""
    if r.kind in SUMMARY_KINDS and not own:  # declared by the producer (a simulated run)
        return "side_request", True, f"{r.kind} request", "the harness's compaction request (declared)"
    if seen is None:
        return cls, explained, declared, note
    if any(c == i for _s, c in seen.compactions):
        note = "the harness's compaction request (recognised)"
        # its own tail edited (a second pass of the summariser: Gemini CLI's verification probe),
        # or compared with an earlier compaction request (Codex sends each without tools): a side
        # request, never a conversation edit
        if not explained and (cls in ("side_request", "tail_edit") or i not in ctx.main):
            return "side_request", True, "compaction request (recognised)", note
    if i in seen.helpers:
        return "side_request", False, own, note  # a helper call (recognise.py)
    if i in seen.pasted and not explained:
        h = seen.pasted[i]
        return (
            "reset_after_compaction",
            True,
            f"compaction (recognised: request {h})",
            f"the summary request {h} wrote, put in the conversation",
        )
    if not explained and cls in ("reset_after_compaction", "static_prefix_edit"):
        c = seen.compaction_between(r.session, p, i)
        shared_msgs = shared_messages(r, par)
        # shorter than what it carried; or than the conversation a tool-less summariser serialised
        restarted = c is not None and (
            r.n_messages < ctx.reqs[c].n_messages
            or (not has_tools(ctx.reqs[c]) and r.n_messages < par.n_messages)
        )
        if c is not None and (at.msg == 0 or (at.seg == "system" and shared_msgs == 0) or restarted):
            fields = changed_system_fields(r, par)
            note = f"changed with the new conversation: {', '.join(fields)}" if fields else ""
            return "reset_after_compaction", True, f"compaction (recognised: request {c})", note
    return cls, explained, declared, note


def describe(ctx: Context, i: int, p: int, k: int, since: str, ob: LBlock | None = None) -> Break:
    """The break of request i against its parent p at block k (`ob`: the parent's block there,
    when the two are not aligned: a second break in the messages after a static edit)."""
    r, par = ctx.reqs[i], ctx.reqs[p]
    nb = r.blocks[k] if k < len(r.blocks) else None
    if ob is None:
        ob = par.blocks[k] if k < len(par.blocks) else None
    at = _position(r, ob, nb)
    cls = _base_class(ctx, i, p, k, at, since)
    declared = r.declared if cls == "side_request" else since  # main-line edits explain no side request
    explained = any(w in declared for w in DECLARED_EDITS)
    cls, explained, declared, note = _recognised(ctx, i, p, at, cls, explained, declared)
    seen = ctx.seen
    if (
        cls == "reset_after_compaction"
        and not explained
        and at.msg == 0
        and not ctx.extends.get(p)  # the parent's conversation ended there
        and _carries_nothing_of(r, par)
        and (seen is None or seen.compaction_between(r.session, p, i) is None)
    ):
        cls = "new_conversation"
    tokens = break_tokens(r, k)
    path, before, after = first_field(at.ob, at.nb)
    return Break(
        i, r.line, p, par.line, at.seg, at.msg, at.blk, at.off, cls, explained, declared, at.old, at.new,
        r.label, tokens, note, path, before, after,
        hint(r, par, at.ob, at.nb, at.seg), dollars(r.model, tokens), r.model,
        content_key(r, cls, at.seg, at.ob, at.nb, path),
    )  # fmt: skip


def message_blocks(r: LoggedRequest) -> list[tuple[int, LBlock]]:
    return [(k, b) for k, b in enumerate(r.blocks) if b.segment == "messages"]


def messages_diverge(r: LoggedRequest, par: LoggedRequest) -> tuple[int, LBlock | None] | None:
    """Where r's messages stop repeating its parent's (r's block index, the parent's block there),
    or None when r's messages contain the parent's whole."""
    mine, theirs = message_blocks(r), message_blocks(par)
    for n, (k, b) in enumerate(mine):
        if n >= len(theirs):
            return None
        o = theirs[n][1]
        if (o.message, o.index, o.role, o.payload) != (b.message, b.index, b.role, b.payload):
            return k, o
    if len(mine) < len(theirs):
        return len(r.blocks), theirs[len(mine)][1]
    return None


def _carries_nothing_of(r: LoggedRequest, par: LoggedRequest) -> bool:
    """No message block of `par` is anywhere among r's messages (a rewritten first message with
    the rest kept is an edit, not a new conversation)."""
    theirs = {(b.role, b.payload) for b in par.blocks if b.segment == "messages"}
    return not any((b.role, b.payload) in theirs for b in r.blocks if b.segment == "messages")


def shared_messages(r: LoggedRequest, par: LoggedRequest) -> int:
    """Leading messages r and its parent have in common (byte-equal blocks)."""

    def msgs(x: LoggedRequest) -> list[list[bytes]]:
        out: list[list[bytes]] = [[] for _ in range(x.n_messages)]
        for b in x.blocks:
            if b.segment == "messages" and b.message is not None and b.message < x.n_messages:
                out[b.message].append(b.payload)
        return out

    n = 0
    for a, b in zip(msgs(r), msgs(par), strict=False):
        if a != b:
            break
        n += 1
    return n
