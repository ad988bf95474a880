"""Task-mode replies of `ctxbench serve` (sim/serve/script.py): a summary request gets a summary in
the form its instruction asks for (Claude Code's <analysis>/<summary> blocks: 2.1.332 re-sends the
request otherwise, bench/claude_code_wire.md §3), of the script's size."""

from __future__ import annotations

from ctxbench.sim.serve.script import summary_reply

CLAUDE_CODE = (
    "CRITICAL: Respond with TEXT ONLY. ... REMINDER: Do NOT call any tools. Respond with plain text "
    "only — an <analysis> block followed by a <summary> block."
)


def test_claude_code_compaction_gets_summary_tags_at_the_script_size() -> None:
    text = summary_reply(CLAUDE_CODE, 3000)
    assert text.startswith("<analysis>") and "\n<summary>\n" in text and text.endswith("</summary>")
    assert len(text) == 3000


def test_an_instruction_without_tags_gets_plain_text() -> None:
    text = summary_reply("CONTEXT CHECKPOINT COMPACTION. Create a handoff summary.", 3000)
    assert "<summary>" not in text and len(text) == 3000
