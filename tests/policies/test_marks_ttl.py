"""Claude Code's marks on an imported session whose harness wrote entries of both TTLs
(policies/condensers.py `ClaudeCodeMarks.recorded_ttl`, set by bench/trace_knows.py): a mark on a
block the log marked keeps the TTL recorded there, any other mark takes the preset's `ttl`."""

from __future__ import annotations

from dataclasses import replace

from ctxbench.policies.condensers import ClaudeCodeMarks
from ctxbench.policies.view import View
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript

F = BlockFactory()


def _transcript(last_cache: str) -> Transcript:
    system = tuple(replace(F.text("system", f"system {i}"), cache="1h") for i in range(3))
    tr = Transcript((), system)
    tr.append(Message.of("user", (F.text("user", "prompt"),)))
    tr.append(Message.of("assistant", (F.text("assistant", "reply"),)))
    tr.append(Message.of("user", (replace(F.text("user", "next"), cache=last_cache),)))
    return tr


def _view(tr: Transcript) -> View:
    return View(tr, None, 200_000, 200_000, 0, -1, True)


def test_recorded_marks_keep_their_ttl_and_the_others_take_the_presets() -> None:
    marks = ClaudeCodeMarks(ttl="1h", recorded_ttl=True)
    tr = _transcript("5m")
    assert marks.place(_view(tr)) == ((1, "1h"), (2, "1h"), (len(tr) - 1, "5m"))
    tr = _transcript("")  # a block the log did not mark (a summary of the policy's own)
    assert marks.place(_view(tr))[-1] == (len(tr) - 1, "1h")


def test_without_recorded_ttl_every_mark_takes_the_presets() -> None:
    tr = _transcript("5m")
    assert {ttl for _, ttl in ClaudeCodeMarks(ttl="1h").place(_view(tr))} == {"1h"}
