"""Gemini CLI's synthetic thought signatures: the function calls of the *active loop* (the model
turns since the last user message that is not a function response) are sent with a thought
signature, which they lose once a new user message starts another loop.

@google/gemini-cli 0.61.0 (bundle: GeminiChat.ensureActiveLoopHasThoughtSignatures) adds
`thoughtSignature: "skip_thought_signature_validator"` to the first function call of each model
turn of the active loop, on every request; recorded against `ctxbench serve`
(tests/bench/data/whatif/gemini-cli-*), the request after "Please continue." differs from the one
before it from the first model turn of the previous loop on, so the provider's cache is read
only up to there. A function of the transcript, kept apart from `CodingConversation`
(sim/harness/coding.py), which applies it when a policy says `thought_signatures: true`.
"""

from __future__ import annotations

from ctxbench.policies.view import Edit
from ctxbench.sim.core.content import TOOL_USE, Message, digest64, make_block
from ctxbench.sim.core.transcript import Transcript


def _is_prompt(m: Message) -> bool:
    return m.role == "user" and not m.has_tool_result


def _unsigned(m: Message) -> Message:
    """`m` with its first function call re-hashed as sent without the signature (same size: the
    server's parser does not count the signature, bench/live ledgers)."""
    blocks = list(m.blocks)
    for i, b in enumerate(blocks):
        if b.kind == TOOL_USE:
            dig = digest64(b"unsigned", b.digest.to_bytes(8, "little"))
            blocks[i] = make_block(
                b.kind,
                b.role,
                b.nbytes,
                b.tokens,
                dig,
                pinned=b.pinned,
                text=b.text,
                name=b.name,
                tool_id=b.tool_id,
            )
            return Message.of(m.role, tuple(blocks), m.tag)
    return m


def end_active_loop(tr: Transcript, first: int = 0) -> Edit | None:
    """Before a new user prompt: the edit by which the previous loop's model turns lose their
    signatures (cause `thought_signatures`, a declared edit), or None when nothing changes."""
    msgs = tr.messages
    start = next((i for i in range(len(msgs) - 1, first - 1, -1) if _is_prompt(msgs[i])), -1)
    if start < 0:
        return None
    old = msgs[start + 1 :]
    new = [(_unsigned(m) if m.role == "assistant" else m) for m in old]
    changed = [k for k, (a, b) in enumerate(zip(new, old, strict=True)) if a is not b]
    if not changed:
        return None
    at = start + 1 + changed[0]
    swapped = tuple(start + 1 + k for k in changed)
    return Edit(at, tuple(new[changed[0] :]), "thought_signatures", swapped=swapped)
