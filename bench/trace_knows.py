"""Presets take what the trace knows (issue 29): a preset's value that the trace records is taken
from the trace, and every value that is only assumed is listed with its value, so `run`'s header
and `--json` (`assumptions`) say what a prediction rests on.

Taken from the trace (unless `--policy-set` sets the key):
- `marks.ttl`: the TTL of the cache marks the trace records (an imported request log keeps each
  block's `cache_control` ttl: FORMAT.md `cache`); 1h when any recorded mark is 1h, since a harness
  that writes 1h entries keeps them an hour (Anthropic prompt caching: "1-hour cache duration",
  https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching); where it records marks of
  both TTLs (a session whose harness switched between them), `marks.recorded_ttl`: a mark on a
  block the log marked keeps that mark's TTL, `marks.ttl` is for the rest (a summary of its own);
- `compaction.summary_bytes`: the mean size of the summaries the trace records (an imported log
  with compactions), instead of the preset's assumed size;
- `compaction.summary_tokens_each`: the billed size of what followed each recorded compaction
  beyond the static prefix, up to the first request after it: its summary block (the importer
  sizes it from that request's bill) and the messages the harness logged with it (sim/prepared.py
  `REATTACHED`, which a preset that compacts by its own rules does not replay). Claude Code sends
  more than the summary after compacting: re-read files, the todo list and plan, skills, the
  output of `SessionStart` hooks run with source `compact`, CLAUDE.md reminders (research/policies.md
  §1 POST_COMPACT_*; Claude Code hooks reference, SessionStart matcher `compact`:
  https://docs.anthropic.com/en/docs/claude-code/hooks). Only the total is known, from the bill;
  with it, the preset's own model of the re-attached files (`reattach_files`) is off, since the
  billed size already holds them, and so is its kept tail (`keep_value` 0): whatever the harness
  kept of the conversation is in that bill too. The n-th compaction the preset makes takes the
  n-th recorded size; one past the last takes `compaction.summary_tokens`, the mean of the recorded
  summary blocks alone (what was re-attached at one point says nothing of another: a 119k-token
  block re-sent once would make every later compaction overflow). Taken only by a preset that
  models Claude Code's re-attachment (`reattach_files` > 0); another preset's post-compaction
  prompt is its summary. With these, a compaction needs an exchange to summarise (`min_older` 2):
  Claude Code's count before the first usage covers the messages alone (research/policies.md §1),
  so a prompt over the threshold for its system part alone does not compact.
  On the shared development sessions the summary text is 14.6 KB and 12.2 KB and the billed
  post-compaction messages 12,497 and 21,155 tokens (spotter 258c7280, 8463c716): the summary's
  text alone would be 3.6k and 3.0k tokens at 4 bytes a token. On the corpus's development part,
  with the files logged after the boundary counted and nothing kept, the first request after each
  compaction the preset shares with the real session is predicted to the token on 49 of 51, and
  14 tokens short on one (JTK dotsv2 2.1.145-2.1.150 main threads, harinathpathipaka visionweb
  2.1.145 sub-agents that kept nothing of a 12k-73k last round, ahmedarafa994, spotter ...; the
  51st, an ahmedarafa994 sub-agent on glm-5.1, is 127,008 over either way); keeping the last round
  was exact on none, over-counted by up to 72,754 tokens and re-compacted early (bench/
  preset_fidelity.md: same compactions 54 -> 58 of 68 on the development part).

- `compaction.reserve_output` (a `claude-code`-marks preset that reserves the summary's output, on
  a log of Claude Code from 1.0.71 to 2.1.20): what that version subtracts from the window for the
  summary before its 13,000-token buffer, with `CLAUDE_CODE_MAX_OUTPUT_TOKENS` unset (npm
  `@anthropic-ai/claude-code` cli.js, read for 1.0.51-2.1.39: `summary_reserve`): 32,000 (its
  default), 8,192 for a Claude 3.5 model and, up to 2.0.23, any Haiku; from 2.1.21 at most 20,000,
  the preset's own. So a 2.0.x session on a 200k Sonnet compacts at 155,000 tokens, not 167,000:
  the development part's 2.0.8 and 2.0.70-2.0.71 logs compacted from 155,489 and 155,052
  (bruno-vilefort-tech, linxiaotutututu1123), the 2.1.39-2.1.150 ones from 166,458. Up to 1.0.70
  Claude Code compacted at 92 % of the window less that reserve, which the preset does not model:
  its rule stays, and is listed among the assumptions.
- `budget` (a preset whose budget is the model window, `budget_means: window`, run without
  `--budget`): the window the harness compacted in, when the trace records automatic compactions
  with the prompt size that triggered them (Claude Code's `compactMetadata.preTokens`). A harness
  decides its window from the model id as it knows it: Claude Code takes 200,000 tokens unless the
  id carries `[1m]` (research/policies.md §1, `MODEL_CONTEXT_WINDOW_DEFAULT`), so a model the
  catalog resolves to its 1M window (a relay's `claude-opus-4.6-1m`) may have run at 200k. Of the
  windows the catalog gives the model (its own, and its row's default when the id asks for the
  1M one), the largest whose threshold (the preset's own: `Compaction.threshold`) is at most the
  smallest recorded trigger; when none is, the largest window whose threshold is (a custom
  `CLAUDE_CODE_AUTO_COMPACT_WINDOW`). Taken only when it differs from the model's window. On the
  development part: Damon-Salvetore/claude-code c001e9a4 (Claude Code 2.1.63 on
  `claude-opus-4.6-1m`) compacted at 168,010 tokens, the 200k threshold (167,000); spotter
  258c7280 and 8463c716 (opus-4-6, 200k) at 167,094 and 167,731, where nothing changes.
- `estimator`: on a log of Claude Code up to 2.1.1, a `claude-code`-marks preset's anchored estimate
  (the last usage plus what was added since, as Claude Code counts from 2.1.2) becomes the last
  usage alone: up to 2.1.1 Claude Code checks auto-compaction against the last response's usage
  total (input, cache and output; its npm cli.js 2.0.8 to 2.1.1, where 2.1.2 on add the messages
  after it). The development part's logs agree: the recorded `preTokens` equal the previous
  request's prompt plus its final output in 29 of the 32 automatic compactions of 2.0.8-2.0.72,
  in none of the 28 of 2.1.39-2.1.150 (`python -m ctxbench.bench.fidelity.compact_count DIR...`);
  a preset that added the tool results compacted dev b566e56e (2.0.57) 1-7 requests early.

Assumed: every other preset value its YAML marks `# assumed`, and `marks.ttl` and
`compaction.summary_bytes` when the trace does not record them.

Not a preset value, but also the trace's: content the recorded harness sent with one turn only
(trace `turn` blocks, Claude Code <= 2.0.29 attachments) leaves the prompt at the next prompt under
a preset too (policies/recorded.py `TurnScopedBlocks`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path

from ctxbench.policies.condensers import LastUsageEstimator
from ctxbench.policies.estimators import AnchoredEstimator
from ctxbench.policies.preset import PRESETS, Policy
from ctxbench.policies.view import View
from ctxbench.sim.core.catalog import model_info, resolve
from ctxbench.sim.core.registry import registered_name
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.prepared import REATTACHED, PreparedTrace
from ctxbench.traces.importers.claude_code_wire import version_tuple
from ctxbench.traces.model import CompactionEvent

_ASSUMED = re.compile(r"^(\s*)([A-Za-z_][\w]*):\s*[^#\n]*#\s*assumed\b")
_KEY = re.compile(r"^([A-Za-z_][\w]*):")


@dataclass(frozen=True)
class Knows:
    policy: Policy  # the preset with what the trace knows applied
    from_trace: tuple[str, ...]  # "KEY=VALUE (why)" taken from the trace
    assumptions: tuple[str, ...]  # "KEY=VALUE (why)" the trace cannot know


def _preset_text(spec: str) -> str:
    path = Path(spec)
    if not (path.suffix in (".yaml", ".yml") or path.exists()):
        path = PRESETS / f"{spec}.yaml"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def assumed_keys(spec: str) -> list[str]:
    """The dotted keys a preset's YAML marks `# assumed` (a component's parameter under its key)."""
    out, parent = [], ""
    for line in _preset_text(spec).splitlines():
        top = _KEY.match(line)
        if top:
            parent = top.group(1)
        m = _ASSUMED.match(line)
        if m:
            out.append(f"{parent}.{m.group(2)}" if m.group(1) else m.group(2))
    return out


def value(policy: Policy, key: str) -> object:
    """The value of a dotted key of `policy` (None when it has no such key)."""
    obj: object = policy
    for part in key.split("."):
        if not is_dataclass(obj) or part not in {f.name for f in fields(obj)}:
            return None
        obj = getattr(obj, part)
    return obj


def _has(policy: Policy, kind: str, param: str) -> bool:
    comp = getattr(policy, kind)
    return is_dataclass(comp) and param in {f.name for f in fields(comp)}


def _set(policy: Policy, kind: str, param: str, v: object) -> Policy:
    return replace(policy, **{kind: replace(getattr(policy, kind), **{param: v})})


def _take(policy: Policy, key: str, v: object, why: str, known: list[str], taken: set[str]) -> Policy:
    """`policy` with `key` ("component.param") set to `v` and the reason listed in `known`, unless
    the policy has no such key or it was set already (`taken`)."""
    kind, param = key.split(".")
    if not _has(policy, kind, param) or key in taken:
        return policy
    known.append(f"{key}={v} ({why})")
    taken.add(key)
    return _set(policy, kind, param, v)


def recorded_ttls(prep: PreparedTrace) -> dict[str, int]:
    """How many recorded cache marks of each TTL the trace holds."""
    out: dict[str, int] = {}
    blocks = [*prep.tools, *prep.system]
    blocks += [b for s in prep.steps if s.message is not None for b in s.message.blocks]
    for b in blocks:
        if b.cache:
            out[b.cache] = out.get(b.cache, 0) + 1
    return out


def recorded_summaries(prep: PreparedTrace) -> list[int]:
    """The byte sizes of the summaries of the compactions the trace records."""
    return [s.message.nbytes for s in prep.steps if s.kind == "compaction" and s.message is not None]


def recorded_summary_tokens(prep: PreparedTrace) -> list[tuple[int, int]]:
    """Per recorded compaction whose summary a bill sized: the billed tokens of its summary block,
    and of all that followed it up to the first request after it (the summary and what the harness
    sent with it, sim/prepared.py `REATTACHED`), sized by the importer from that request's bill."""
    out: list[tuple[int, int]] = []
    sized = False
    for s in prep.steps:
        if s.kind == "compaction":
            sized = s.message is not None and s.message.tokens > 0
            if sized and s.message is not None:
                out.append((s.message.tokens, s.message.tokens))
        elif sized and s.message is not None and s.message.tag == REATTACHED:
            out[-1] = (out[-1][0], out[-1][1] + s.message.tokens)
    return out


def recorded_auto_triggers(prep: PreparedTrace) -> list[int]:
    """The prompt sizes that triggered the automatic compactions the trace records."""
    return [
        int(e.pre_tokens) for s in prep.steps
        if s.kind == "compaction" and isinstance(e := s.event, CompactionEvent)
        and e.trigger == "auto" and e.pre_tokens
    ]  # fmt: skip


def _threshold(policy: Policy, window: int, max_output: int) -> int:
    """Where `policy` compacts on a model of `window` tokens (its compaction's own threshold)."""
    view = View(Transcript(), None, window, window, 0, -1, True, max_output=max_output)
    return policy.compaction.threshold(view)


def implied_window(policy: Policy, model: str, trigger: int) -> int:
    """The window `policy` compacts at `trigger` tokens in on `model` (module docstring, `budget`)."""
    info = model_info(model)
    candidates = {info.window, model_info(resolve(model).key).window}
    fits = [w for w in candidates if _threshold(policy, w, info.max_output) <= trigger]
    if fits:
        return max(fits)
    lo, hi = 1, min(candidates)  # the threshold grows with the window
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _threshold(policy, mid, info.max_output) <= trigger else (lo, mid - 1)
    return lo


# The first Claude Code version whose auto-compaction count adds the messages after the last usage
# (npm cli.js: 2.1.1 returns the last usage's total, 2.1.2 adds an estimate of what follows it).
COUNTS_ADDED_FROM = (2, 1, 2)


# Claude Code versions where its summary reserve changed (npm cli.js, module docstring)
RESERVE_FROM = (1, 0, 71)  # before: 92 % of (window - reserve), not modelled
HAIKU_SMALL_UNTIL = (2, 0, 23)  # up to here any Haiku reserves 8,192
CAPPED_FROM = (2, 1, 21)  # from here the reserve is at most 20,000 (the preset's own)


def summary_reserve(version: str, model: str) -> int:
    """The tokens Claude Code `version` reserves for the summary's output on `model` when it
    decides to compact, `CLAUDE_CODE_MAX_OUTPUT_TOKENS` unset (module docstring); 0 where its
    rule is another (before `RESERVE_FROM`)."""
    v, m = version_tuple(version), model.lower()
    if v < RESERVE_FROM:
        return 0
    if "3-5" in m or (v <= HAIKU_SMALL_UNTIL and "haiku" in m):
        return 8192
    return 20000 if v >= CAPPED_FROM else 32000


def _claude_code_version(policy: Policy, recorded_by: str) -> str:
    """The recorded Claude Code version when `policy` models Claude Code (its cache marks), else ""."""
    fmt, _, version = recorded_by.partition(" ")
    return version if fmt == "claude-code" and registered_name(policy.marks) == "claude-code" else ""


def counts_last_usage_only(policy: Policy, recorded_by: str) -> bool:
    """Whether `policy` models Claude Code (its cache marks) with an anchored estimate while the
    trace was recorded by a Claude Code that counted the last usage alone (module docstring)."""
    version = _claude_code_version(policy, recorded_by)
    return (
        bool(version)
        and version_tuple(version) < COUNTS_ADDED_FROM
        and registered_name(policy.estimator) == "anchored"
    )


def _take_reserve(
    policy: Policy, prep: PreparedTrace, known: list[str], taken: set[str]
) -> tuple[Policy, str]:
    """`policy` with the summary reserve of the recorded Claude Code version (module docstring);
    and why the preset's own stands unmodelled ("" when it does not)."""
    version = _claude_code_version(policy, prep.recorded_by)
    reserve = value(policy, "compaction.reserve_output")
    if not version or not reserve or "compaction.reserve_output" in taken:
        return policy, ""
    taken.add("compaction.reserve_output")
    own = summary_reserve(version, prep.model)
    if not own:
        return policy, f"Claude Code {version} compacts at 92 % of the window less a reserve: not modelled"
    if own != reserve:
        policy = _set(policy, "compaction", "reserve_output", own)
        known.append(
            f"compaction.reserve_output={own} (Claude Code {version} reserves {own:,} tokens for the "
            f"summary on {prep.model}: npm cli.js)"
        )
    return policy, ""


def apply(policy: Policy, prep: PreparedTrace, spec: str, set_keys: tuple[str, ...] = ()) -> Knows:
    """`policy` (preset `spec`, with the `--policy-set` keys `set_keys` already applied) with what
    the trace knows, and the list of what it assumes (module docstring)."""
    known: list[str] = []
    taken: set[str] = set(set_keys)
    if _has(policy, "marks", "ttl") and "marks.ttl" not in taken:
        ttls = recorded_ttls(prep)
        if ttls:
            ttl = "1h" if "1h" in ttls else "5m"
            policy = _set(policy, "marks", "ttl", ttl)
            counts = ", ".join(f"{n} {t}" for t, n in sorted(ttls.items()))
            known.append(f"marks.ttl={ttl} (the trace records cache marks: {counts})")
            taken.add("marks.ttl")
            if len(ttls) > 1 and _has(policy, "marks", "recorded_ttl") and "marks.recorded_ttl" not in taken:
                policy = _set(policy, "marks", "recorded_ttl", True)
                known.append("marks.recorded_ttl=True (marks of both ttls: each marked block keeps its own)")
                taken.add("marks.recorded_ttl")
    if _has(policy, "compaction", "summary_bytes") and "compaction.summary_bytes" not in taken:
        sizes = recorded_summaries(prep)
        if sizes:
            mean = round(sum(sizes) / len(sizes))
            policy = _set(policy, "compaction", "summary_bytes", mean)
            known.append(
                f"compaction.summary_bytes={mean} (mean of the {len(sizes)} summaries the trace records)"
            )
            taken.add("compaction.summary_bytes")
    # only a preset that models Claude Code's re-attachment (reattach_files) sends what the billed
    # size holds; another preset's post-compaction prompt is its own summary
    reattaches = bool(value(policy, "compaction.reattach_files"))
    if reattaches and "compaction.summary_tokens" not in taken:
        billed = recorded_summary_tokens(prep)
        if billed:
            mean = round(sum(n for n, _ in billed) / len(billed))
            policy = _set(policy, "compaction", "summary_tokens", mean)
            known.append(
                f"compaction.summary_tokens={mean} (mean billed size of the {len(billed)} recorded "
                "summaries: a compaction past the recorded ones)"
            )
            if "compaction.summary_tokens_each" not in taken:
                each = tuple(n for _, n in billed)
                policy = _set(policy, "compaction", "summary_tokens_each", each)
                known.append(
                    f"compaction.summary_tokens_each={','.join(str(n) for n in each)} (the n-th "
                    "compaction takes the billed size of what followed the n-th recorded one: summary, "
                    "re-attached files, hook output)"
                )
            taken.add("compaction.summary_tokens")
            # the billed sizes hold what was re-attached, whatever the harness kept, and nothing
            # precedes the first exchange (module docstring)
            held = "the billed sizes above hold it"
            policy = _take(policy, "compaction.reattach_files", 0, held, known, taken)
            policy = _take(policy, "compaction.keep_value", 0, held, known, taken)
            policy = _take(policy, "compaction.min_older", 2, "a summary needs an exchange", known, taken)
    est = policy.estimator
    if (
        "estimator" not in taken
        and isinstance(est, AnchoredEstimator)
        and counts_last_usage_only(policy, prep.recorded_by)
    ):
        policy = replace(policy, estimator=LastUsageEstimator(est.bytes_per_token, est.image_tokens))
        known.append(f"estimator=last-usage ({prep.recorded_by} counts the last usage alone)")
        taken.add("estimator")
    policy, unmodelled = _take_reserve(policy, prep, known, taken)
    triggers = recorded_auto_triggers(prep)
    if policy.budget_means == "window" and policy.budget <= 0 and "budget" not in taken and triggers:
        window = implied_window(policy, prep.model, min(triggers))
        if window != prep.window:
            policy = replace(policy, budget=window)
            known.append(
                f"budget={window} (the window the harness compacted in: its {len(triggers)} automatic "
                f"compaction(s) fired from {min(triggers):,} tokens, below the threshold of the "
                f"{prep.window:,}-token window)"
            )
            taken.add("budget")
    assumed = []
    keys = assumed_keys(spec)
    if _has(policy, "marks", "ttl") and "marks.ttl" not in keys:
        keys.append("marks.ttl")
    for key in keys:
        v = value(policy, key)
        if key in taken or v is None:
            continue
        why = "the trace records no cache marks" if key == "marks.ttl" else "assumed by the preset"
        if key == "compaction.summary_bytes":
            why = "assumed by the preset; the trace records no summaries"
        assumed.append(f"{key}={v} ({why})")
    if unmodelled:
        reserve = value(policy, "compaction.reserve_output")
        assumed.append(f"compaction.reserve_output={reserve} (the preset's rule; {unmodelled})")
    return Knows(policy, tuple(known), tuple(assumed))
