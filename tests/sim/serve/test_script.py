"""Task-mode replies of `ctxbench serve` (sim/serve/script.py): a summary request gets a summary in
the form its instruction asks for (Claude Code's <analysis>/<summary> blocks: 2.1.332 re-sends the
request otherwise, bench/claude_code_wire.md §3), of the script's size."""

from __future__ import annotations

from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.serve.script import summary_reply
from ctxbench.sim.serve.wire.common import Parsed

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


def _parsed(
    last_user_text: str, tools: tuple[str, ...] = ("run_shell_command",), wants_json: bool = False
) -> Parsed:
    return Parsed("gemini", "gemini-2.5-pro", False, Transcript((), ()), (), tool_names=tools,
                  last_user_text=last_user_text, wants_json=wants_json)  # fmt: skip


def test_a_text_only_step_ends_the_turn_and_the_next_speaker_check_continues_while_steps_remain() -> None:
    """bench/live/whatif_gemini_cli_task.yaml: a segment ends with a text reply; Gemini CLI's
    next-speaker check is told "model" while the script has steps left, "user" after."""
    import json

    from ctxbench.sim.serve.script import NEXT_SPEAKER_CHECK, Scripter

    s = Scripter("task", [{"text": "Segment done.", "output_tokens": 8}, {"shell": "echo hi"}])
    first = s.reply(_parsed("go"), None)
    assert first.blocks == ({"type": "text", "text": "Segment done."},) and first.output_tokens == 8
    check = _parsed(f"... {NEXT_SPEAKER_CHECK} ...", (), wants_json=True)
    assert json.loads(s.reply(check, None).blocks[0]["text"])["next_speaker"] == "model"
    assert s.reply(_parsed("Please continue."), None).blocks[0]["type"] == "tool_use"
    assert json.loads(s.reply(check, None).blocks[0]["text"])["next_speaker"] == "user"


def test_each_summary_of_a_run_says_which_it_is() -> None:
    """Identical summaries would let a harness that re-summarizes its own snapshot (Gemini CLI)
    read the next request from the cache, which no real model's summaries allow."""
    a, b = summary_reply("plain", 3000, 1), summary_reply("plain", 3000, 2)
    assert a != b and len(a) == len(b) == 3000 and a.startswith("Summary 1. ")


def test_a_harness_that_calls_tools_in_xml_gets_each_step_written_so() -> None:
    """Cline on an OpenAI-compatible endpoint offers no tools and has the model write its calls as XML
    tags (tests/traces/importers/test_cline_task_live.py records such a run): the steps are written
    in its form, a shell step as its `execute_command`, and after them the final text; a request with
    neither tools nor that system prompt is a side request."""
    from ctxbench.sim.core.tokens import BlockFactory
    from ctxbench.sim.serve.script import Scripter
    from ctxbench.sim.serve.wire.openai import parse_chat

    system = "# Tool Use Formatting\n\nTool use is formatted using XML-style tags. ..."
    body = {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "go"}],
    }
    p = parse_chat(body, {}, BlockFactory())
    assert p.xml_tools and not p.tool_names
    steps = [
        {"shell": "ls -l", "text": "Listing."},
        {"tool": "attempt_completion", "input": {"result": "Done."}, "output_tokens": 9},
    ]
    s = Scripter("task", steps, final_text="All done.")
    assert s.reply(p, None).blocks[0]["text"] == (
        "Listing.\n\n<execute_command>\n<command>ls -l</command>\n"
        "<requires_approval>false</requires_approval>\n</execute_command>"
    )
    done = s.reply(p, None)
    assert done.blocks[0]["text"] == "<attempt_completion>\n<result>Done.</result>\n</attempt_completion>"
    assert done.output_tokens == 9
    assert s.reply(p, None).blocks[0]["text"] == "All done."
    side = parse_chat(
        {"model": "gpt-4.1", "messages": [{"role": "user", "content": "a title"}]}, {}, BlockFactory()
    )
    assert not side.xml_tools
    assert Scripter("task", steps).reply(side, None).blocks[0]["text"].startswith("Summary 1.")
