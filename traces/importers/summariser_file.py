"""Claude Code's compaction summariser, logged as a sub-agent file (`agent-acompact-*.jsonl`,
FORMATS.md §2.1): the summariser request is the conversation so far plus the compaction
instruction (its last user message), and its reply is the summary.

- With its session's log (the usual case): the instruction and the reply are inserted into the
  main trace just before the next `compact_boundary`, tagged as the summary request.
- On its own (a folder that kept the sub-agent files but not the session's log): Claude Code
  2.1.x writes the forked conversation whole, so the file holds the main thread's requests since
  the previous compaction and ends with the summariser's. Its last request is tagged as the summary
  request and a compaction follows it: the real harness compacted there, and a replay that counted
  that request as an ordinary turn would call a preset that compacts there wrong.
"""

from __future__ import annotations

from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.importers.tokens import Item


def merge_compaction_request(main: list[Item], ac: list[Item], name: str, report: ImportReport) -> None:
    """Insert the summariser request of `ac` (its first reply and the last user message before
    it) into `main` just before the next compaction boundary (module docstring)."""
    reply = next((i for i in ac if i.kind == "reply"), None)
    users = [i for i in ac if i.kind == "user" and (reply is None or (i.t or 0) <= (reply.t or 0))]
    if reply is None or not users:
        report.skip("compaction sub-agent file without a request", name)
        return
    t = reply.t or 0.0
    at = next((k for k, i in enumerate(main) if i.kind == "compact" and (i.t or 0.0) >= t), len(main))
    instr = users[-1]
    instr.tag = "summary"
    reply.tag = "summary"
    main[at:at] = [instr, reply]
    report.counts["compaction requests merged from sub-agent files"] += 1


def close_compaction(ac: list[Item], name: str, report: ImportReport) -> None:
    """Tag the last request of a summariser file read without its session as the summary request
    and record the compaction after it (module docstring)."""
    last = max((k for k, i in enumerate(ac) if i.kind == "reply"), default=-1)
    instr = max((k for k, i in enumerate(ac[:last]) if i.kind == "user"), default=-1)
    if last < 0 or instr < 0:
        report.skip("compaction sub-agent file without a request", name)
        return
    ac[instr].tag = ac[last].tag = "summary"
    if not any(i.kind == "compact" for i in ac[last + 1 :]):
        ac.insert(last + 1, Item("compact", t=ac[last].t_end or ac[last].t, trigger="auto"))
    report.counts["compaction sub-agent files read without their session (last request: the summariser)"] += 1
