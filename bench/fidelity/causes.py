"""Why a fidelity replay missed a request's billed cache read (bench/fidelity/compare.py), named from the
recorded usage around the request and what the recorded harness version does on the wire.

Each cause names the mechanism and its evidence; the report groups mismatches by the cause without
its per-request numbers (bench/fidelity/tables.py `cost_by_cause`). What the log cannot show stays named as
such, with the public evidence for it:

- server-side lookup miss: reads pinned at the system + tools prefix that nothing in the log
  explains, while the same flow elsewhere in the same logs reads in full (spotter 8463c716 #142
  after a task notification, 37f83ec9 #20 after a rejected tool use and a new prompt). Others see
  the same signature, intermittent and self-healing, and the API's own cache diagnostics name it
  `previous_message_not_found`, not a prompt change (anthropics/claude-code#87966). The fidelity
  replay takes them from the bill (bench/fidelity/outside.py). In the <= 2.0.x logs (37f83ec9 #58,
  9e953218 #30) the signature cannot tell one from an unlogged change at the very start of the
  first message. A read of exactly the identity block's end at a new prompt, below the system end
  read before, is a restarted CLI's new system prompt tail and is modelled
  (traces/importers/system_tail.py; 9e953218 #30, bench/claude_code_wire.md §1);
- unlogged attachments: Claude Code <= 2.0.x computes attachments every turn (changed files,
  @-mentioned files, IDE diagnostics, todo reminders: cli.js 2.0.5 `getAttachments`) and does not
  write them to the transcript (attachment lines appear in 2.1.x, FORMATS.md §2.1). Run as the IDE
  extension runs it, up to 2.0.29 sends them with their own turn's requests only (cli.js 2.0.5
  `u4Q`; loopback runs of 2.0.5-2.0.37, bench/claude_code_wire.md §1): the next turn's read falls
  back to the newest entry written without them. The @-mentioned files are modelled: the importer
  adds them as `turn` blocks sized from the bill and the recorded harness drops them at the next
  prompt (bench/claude_code_wire.md §1); the others have no position in the log and are named per
  request (the previous prompt's @-mentioned files listed, claude_code_wire.py `at_mentions`);
- previous request's entry not read, where nothing below explains it. In the Claude Code 2.1.114
  conversations two causes were found (bench/claude_code_wire.md §2): the away
  summary, a forked query with 5m marks, re-timed the 1h entry it read (bench/fidelity/forks.py,
  OBSERVED `refresh_ttl`); an Opus 4.7 entry written on top of a read looked unreadable 2.2-2.8 s
  after its request started there, which did not hold on other Opus 4.7 logs and is not modelled;
- static prefix written elsewhere: the read lands on the static prefix an earlier session wrote
  (`meta.warm_tokens`) where the replay has it expired (an idle gap longer than the TTL) or not
  in this rendering (a sibling sub-agent wrote it after its own first deferred tools).
"""

from __future__ import annotations

from typing import Any

from ctxbench.bench.fidelity.results import RequestCompare, near
from ctxbench.bench.fidelity.suggestion_forks import reads_response
from ctxbench.sim.core.catalog import CatalogError, model_info
from ctxbench.sim.core.names import TTL_SECONDS, is_ttl
from ctxbench.sim.core.thinking import strips_thinking
from ctxbench.traces.importers.claude_code_wire import (
    may_suggest_prompts,
    turn_scoped_attachments,
    version_tuple,
)

# Previous request's entry not read (module docstring): what is known.
PREVIOUS_NOT_READ = (
    "neither a forked query nor an entry not yet readable, the two causes found in the Claude Code "
    "2.1.114 logs (bench/claude_code_wire.md §2), explains it: unexplained"
)
# A turn start that read the response before it too (suggestion_read): not in the prediction, since
# whether the account's Claude Code sends prompt suggestions is a server-side flag the log does not
# show (bench/claude_code_wire.md §6: on the development part's Claude Code 2.0.67+, 283 of the 575
# turn starts that read either did so, in 9 of 16 sources, 214 of them one account's).
SUGGESTION_READ = (
    "read the previous prompt and the response that ended the turn: a forked query the log does not "
    "show cached them (Claude Code's prompt suggestion, sent when the account's server-side flag or "
    "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION allows it; bench/claude_code_wire.md §6)"
)
# Claude Code versions whose transcripts log attachments (FORMATS.md §2.1: `attachment` lines, 2.1.x)
LOGS_ATTACHMENTS_FROM = (2, 1, 0)


def system_at(meta: dict[str, Any], index: int) -> int:
    """The system + tools size S of request `index`: `meta.system_tokens`, or, where the bill shows
    a restarted CLI with its own system prompt tail (traces/importers/system_tail.py), that
    process's (`meta.system_restarts`: [first request, system end] of each later process)."""
    system = int(meta.get("system_tokens", 0) or 0)
    for first, end in meta.get("system_restarts") or ():
        if int(first) <= index:
            system = int(end)
    return system


def _turn_scoped(r: RequestCompare, meta: dict[str, Any]) -> str:
    """At a turn start of Claude Code up to 2.0.29 (claude_code_wire.py
    TURN_SCOPED_ATTACHMENTS_BEFORE), why the read fell back: the previous turn's attachments are
    no longer sent; '' when this is not such a request."""
    if not (r.real_user and turn_scoped_attachments(str(meta.get("version", "")))):
        return ""
    why = (
        "Claude Code up to 2.0.29 run by an SDK host (the IDE extension) sends a turn's attachments "
        "with that turn's requests only (cli.js 2.0.5 `u4Q`, checked against ctxbench serve)"
    )
    if r.dropped_mentions:
        files = ", ".join(r.dropped_mentions)
        return (
            f"previous turn's @-mentioned files dropped: {why}; the files the previous prompt "
            f"@-mentioned ({files}) were sent with it, so this read falls back to the newest entry "
            "written without them"
        )
    return (
        f"previous turn's unlogged attachments dropped (likely): {why}; the previous prompt "
        "@-mentions nothing, so they would be others (todo reminders, IDE diagnostics after an "
        "edit, changed files), at positions the log does not show"
    )


def unlogged_attachments(meta: dict[str, Any]) -> bool:
    v = version_tuple(str(meta.get("version", "")))
    return meta.get("format") == "claude-code" and len(v) == 3 and v < LOGS_ATTACHMENTS_FROM


def likely_cause(
    r: RequestCompare, meta: dict[str, Any], model: str = "", prev: RequestCompare | None = None
) -> str:
    """Why the prediction missed, from the recorded usage around the request (module docstring);
    `prev` is the request before it."""
    billed, pred = r.billed.cache_read, r.predicted.cache_read
    system = system_at(meta, r.index)
    warm = int(meta.get("warm_tokens", 0) or 0)
    ttl_name = str(meta.get("ttl", "5m"))
    ttl = TTL_SECONDS[ttl_name] if is_ttl(ttl_name) else 300.0
    if billed > pred and suggestion_read(r, prev, meta):
        return SUGGESTION_READ
    if r.ok:
        return _write_off(r, meta)
    if billed < pred:
        return _read_less(r, meta, model, system, warm, ttl)
    if r.index == 0:
        return "prefix cached before the session started"
    if warm and near(billed, warm) and (r.gap > ttl or r.miss_cause):
        why = (
            f"after a {r.gap:.0f} s idle gap longer than the TTL"
            if r.gap > ttl
            else f"after its own prefix changed ({r.miss_cause}: e.g. a sibling's first deferred tools)"
        )
        return f"static prefix written by another session or conversation of the account: read {why}"
    if r.miss_cause == "ttl_expiry":
        return (
            f"entry outlived its TTL after a {r.gap:.0f} s gap "
            "(best-effort retention or shared with other sessions)"
        )
    if r.miss_cause == "compaction":
        return "compaction: the provider kept more of the prefix than the recorded compaction implies"
    if r.miss_cause == "turn_scoped" and system and near(pred, system):
        return (
            "previous turn's @-mentioned files dropped (modelled): the replay falls back to the system "
            "+ tools prefix S, the smallest such read of the session, while the provider read a longer "
            "system prompt end: the system prompt may have changed during the session in a way the "
            "bill does not show as a restart (traces/importers/system_tail.py), so S is the part the "
            "two versions share"
        )
    return f"provider read more than the model predicted ({r.miss_cause or 'no miss cause'})"


def suggestion_read(r: RequestCompare, prev: RequestCompare | None, meta: dict[str, Any]) -> bool:
    """Whether turn start `r` read the previous request's whole prompt and the response after it,
    as a prompt-suggestion fork leaves them (`SUGGESTION_READ`; suggestion_forks.py measures it)."""
    if prev is None or not r.real_user or not may_suggest_prompts(str(meta.get("version", ""))):
        return False
    return reads_response(r.billed.cache_read, prev.billed.total_input, prev.billed.output_tokens)


def _write_off(r: RequestCompare, meta: dict[str, Any]) -> str:
    """The read is within tolerance, the cache write or uncached input is not."""
    if unlogged_attachments(meta):
        return (
            "cache write off: the billed prompt held content a later request no longer had (attachments "
            "Claude Code <= 2.0.x does not log, other than @-mentioned files, which are modelled); the "
            "importer takes the lost tokens back from the blocks before (traces/importers/sizing.py), "
            "so this predicted prompt is short"
        )
    if r.fallback_of >= 0 and r.index - r.fallback_of == 2 and r.billed.cache_read < r.predicted.cache_read:
        return (
            f"previous request's entry not read: request #{r.index - 1}'s entry was skipped for "
            f"request #{r.fallback_of}'s (within the read's tolerance, not the write's; {PREVIOUS_NOT_READ})"
        )
    return "cache write or uncached input off"


def _anthropic(model: str) -> bool:
    """Whether `model` is served by Anthropic (an unknown or empty model counts as Anthropic's, the
    recorded harnesses' default)."""
    try:
        return not model or model_info(model).provider == "anthropic"
    except CatalogError:
        return True


def _read_less(
    r: RequestCompare, meta: dict[str, Any], model: str, system: int, warm: int, ttl: float
) -> str:
    billed = r.billed.cache_read
    if r.gap > ttl:
        return f"idle gap vs TTL: {r.gap:.0f} s gap > {ttl:.0f} s"
    if billed == 0:
        return (
            "everything missed though the prefix was live: tools or system changed (e.g. tools "
            "loaded by ToolSearch) or best-effort eviction"
        )
    if not r.real_user and near(billed, r.turn_start) and (not model or strips_thinking(model)):
        return (
            "read fell back to the start of the turn: non-tool-result content the log does not show "
            "stripped the turn's earlier thinking (providers.md §1.6), as the IDE diagnostics "
            "Claude Code <= 2.0.x sends after an edit without logging them"
        )
    if system and near(billed, system):
        evidence = (  # Anthropic's own diagnostics; another provider's cache has no such public name
            "the API's diagnostics name it previous_message_not_found, anthropics/claude-code#87966; "
            if _anthropic(model) else ""
        )  # fmt: skip
        return (
            "read pinned at the system + tools prefix with nothing in the log changed: a server-side "
            f"lookup miss (intermittent and self-healing; {evidence}the same flows elsewhere in "
            "these logs read in full) or a change of the first message the log does not show"
        )
    if warm and near(billed, warm):
        return "prefix edit in the system prompt (not in the log): only the shared static prefix was read"
    scoped = _turn_scoped(r, meta)
    if scoped:
        return scoped
    if unlogged_attachments(meta):
        return (
            "attachments the log does not show changed an earlier message: Claude Code <= 2.0.x "
            "computes them every turn (changed or @-mentioned files, IDE diagnostics, "
            "todo reminders) without logging them; the read fell back to an earlier cache point"
        )
    if r.fallback_of >= 0 and r.index - r.fallback_of == 2:
        return (
            f"previous request's entry not read: request #{r.index - 1}'s prompt up to its mark is "
            f"unchanged in the log, yet the read fell back to request #{r.fallback_of}'s entry "
            f"({PREVIOUS_NOT_READ})"
        )
    if r.fallback_of >= 0:
        return f"prefix edit (not in the log) after request #{r.fallback_of}: the read fell back to its entry"
    return "prefix edit (not in the log): the read fell back to an earlier cache point"
