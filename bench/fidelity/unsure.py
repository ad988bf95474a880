"""Where the replay's model of the client is unsure, and the naive fallback there (issue 28:
never worse than naive).

The replay predicts each request's cache read from the client's prompt as the importer rebuilt
it. Where the log shows that rebuild cannot be trusted, a break the replay predicts from the
client's side (a changed prefix, dropped attachments, a lookback miss...) may be an artefact of
the import, not of the client; there the request falls back to what the bill implies, the naive
read (the previous request's read + write, bench/fidelity/compare.py), and says so:
`fallback: naive (<reason>)`. Breaks the provider model predicts from the recorded timing alone
(TTL expiry after an idle gap, a compaction the log records, the first request, a model switch,
a tool list the log records changing) are kept: they do not depend on the rebuilt prompt.

Reasons, per request (`Unsure.at`):
- `unlogged shrink`: the billed prompt (uncached + read + write) shrinks by more than
  `SHRINK_SHARE` of itself with no compaction line before it; from there on the rebuilt
  prompt no longer follows the one sent (Claude Code 1.0.81/1.0.90 in the issue 28 corpus:
  169,061 -> 35,522 tokens);
- `blocks sized 0`: more than `ZERO_BLOCKS_SHARE` of the conversation's message blocks were sized
  0 tokens by the importer (content the bill never showed: the same 1.0.8x logs, 70-76 %);
- `sized down by a later shrink`: a request before a billed prompt that shrank with no compaction line
  (by any share): the importer took the missing tokens back from the blocks sized last, so that
  the requests after it stay exact (traces/importers/sizing_shares.py `RESIZED`), and this request's
  rebuilt prompt lost them too: shorter than the one it was billed for, so a read it predicts is
  not the client's (measured below, `SIZED_DOWN`);
- `unknown line type`: the log holds line types the importer does not know (`ai-title`, `mode`);
- `version not checked`: the recorded Claude Code version is not one the replay was checked on
  (`CHECKED_VERSIONS`);
- `prompt as sent not in the log`: a format whose log does not hold the prompt as it was sent
  (`PROMPT_NOT_LOGGED`): a read the replay predicts short of the naive one, from a prefix break
  in the rebuilt prompt, is not evidence of a break;
- `units end inside messages`: a provider whose cache reads end at token positions inside a message
  (`READS_INSIDE_MESSAGES`: DeepSeek's units end where the previous output ended, providers.md §4),
  while the importer sizes a message only as a whole: the rebuilt prompt cannot place such a read;
- `at the TTL's edge`: a `ttl_expiry` break on Anthropic's cache (its explicit breakpoints, a relay
  to its models included) whose idle gap outlived the entry's TTL by less than `TTL_EDGE`: entries
  are "promptly, though not immediately, deleted" after their minimum lifetime (Anthropic's
  prompt-caching guide), and the log's timestamps are the client's, not the server's clock, so
  whether such an entry was still there the log cannot say (measured below, `TTL_EDGE`);
- `served by another backend`: a request of a conversation that switched backend (a Claude Code
  log on Claude models, then on Z.ai's GLM) whose model is not of the vendor the conversation is
  replayed on (`other_backend`): the replay's cache, TTL included, is its first model's vendor's,
  not that backend's, so here even a timing break is not evidence (with the TTL's edge, the reasons
  that override `TIMING_CAUSES`; measured below, `OTHER_BACKEND`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity, near, tolerance
from ctxbench.sim.core.catalog import CatalogError, model_info
from ctxbench.sim.core.names import TTL_SECONDS
from ctxbench.traces.importers.sizing_shares import RESIZED
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace

# Claude Code versions of the development sessions (the shared traces-real folder: sniffly
# d3ad4cdc 1.0.17, claude-code-log 37f83ec9 1.0.51, 9e953218 2.0.5, cb2e607c 2.0.37, ef958aa1
# 2.1.114, claude-code-viewer fe5e1c67 1.0.98, spotter 8463c716/258c7280 2.1.39, cua-sandbox-apps
# pycharm/pgadmin 2.1.97; the corpus dev rows add nothing new). Another version is "not checked".
CHECKED_VERSIONS = frozenset({"1.0.17", "1.0.51", "1.0.98", "2.0.5", "2.0.37", "2.1.39", "2.1.97", "2.1.114"})
# Share of zero-sized message blocks above which the rebuilt prompt is unsure. The development
# sessions stay far below it (measured with `zero_block_share`: at most 0.08, a sidechain of
# claude-code-viewer fe5e1c67, 1.0.98); the issue 28 logs of Claude Code 1.0.81/1.0.90: 0.70-0.76.
ZERO_BLOCKS_SHARE = 0.5
# A billed prompt shrinking by more than this share of itself without a compaction line is an
# unlogged shrink. Thinking stripped from earlier turns shrinks prompts legitimately (providers.md
# §1.6): the largest such shrink of the development sessions is 13.6 % (claude-code-log 9e953218,
# 2.0.5, Sonnet 4.5); the issue 28 1.0.81 log shrinks by 79 % (169,061 -> 35,522).
SHRINK_SHARE = 0.5
# Formats whose rebuilt prompt is not the prompt as sent, with the measurement that says so. Codex
# rollouts keep the reasoning items encrypted or not at all, and not the instructions and tools as
# serialised: on the development part (`python -m ctxbench.bench.fidelity.measure --corpus DIR`,
# Codex rows of bench/corpus/sessions.csv with split dev and traces-real codex-tui), where the
# replay predicted a read short of the naive one with no miss cause, the bill read what the naive
# reading says on 204 requests, what the replay said on 6 (and neither on 96).
PROMPT_NOT_LOGGED = frozenset({"codex", "codex-rollout"})
# Provider families (a profile's `provider:`) whose reads end inside messages. On the development
# part (Claude Code 2.1.x on deepseek-v4 models: harinathpathipaka-commits/visionweb and
# 886caigudong/caigudong- f9d68320; opencode on DeepSeek, suhd550-dev/stunning-memory), of the
# DeepSeek requests after a conversation's first with no timing cause, the replay's read and the
# naive one agreed on 1,021; where they differed, by one 128-token unit or more, the bill read
# exactly the naive read on 747, the replay's on 9, neither on 110 (`python -m
# ctxbench.bench.fidelity.measure --corpus DIR`, "reads in units"): so one unit apart is a
# difference to fall back on (bench/fidelity/compare.py `_in_steps`).
READS_INSIDE_MESSAGES = frozenset({"deepseek"})
# Requests served by another backend than the conversation's first model's vendor. On the
# development part (13 conversations, mostly ahmedarafa994/eq-prediction: Claude models, then
# glm-4.7/glm-5.1), where the replay's own read and the naive one differed, the bill sided with the
# naive read on 678 requests (ttl_expiry 14, model_switch 3, lookback_exceeded 34), with the replay
# on 7, neither on 98 (`python -m ctxbench.bench.fidelity.measure --corpus DIR`, "reads on another
# backend").
OTHER_BACKEND = "served by another backend"
# Seconds past an Anthropic entry's TTL within which an expiry break is unsure (`AT_TTL_EDGE`). On
# the development part (`python -m ctxbench.bench.fidelity.measure --corpus DIR --shared DIR`,
# "expiry breaks at the TTL's edge"; Anthropic's cache and its relays, requests on another backend
# left out), of the requests the replay says expired, those sent 0-20 s past the TTL read at least
# half the previous prompt on 3 of 5 (ahmedarafa994/eq-prediction, ericmilton711/claude-skills,
# Damon-Salvetore/claude-code kept; Eiji1202/dotclaude, keenanthomson/dotfiles lost): a coin's
# toss; 20-40 s past it on 0 of 10, 40-100 s on 1 of 12: expired, as predicted. The test part,
# checked after: of the 5 requests that fall back here (a sixth already did, on another backend),
# the bill read the naive read on 4 (CaptainRandom00/Claude-Code, LZY2333/LZY-FE-JumpTrack,
# LAF-US/IDAHO-VAULT), the replay's own on 1. A session that records 1h marks (`meta.ttl`, its
# system prompt's) may mark its messages 5m: both lifetimes have an edge there (`entry_lives`; the
# development part has no expiry at the 5m edge in such a session, the test part one, LAF-US).
# Tried and not kept: drawing such a read lost at the development rate (2 of 5) in the cost
# interval moved a session's median by a whole lost read (development part: Claude Code cost
# within 2 % 85 -> 84 %, billed inside 1,424 -> 1,423 of 1,523; test part unchanged).
TTL_EDGE = 20.0
# Requests sized down by a later shrink. On the development part (`python -m
# ctxbench.bench.fidelity.measure --corpus DIR --shared DIR`, "reads of a request sized down by a
# later shrink"), where the replay's own read differed from the naive one with no timing cause, the
# bill sided with the naive read on 2,493, the replay's on 79, neither on 945 (Codex rollouts, Claude
# Code on several backends and on Z.ai, Gemini CLI: ahmedarafa994/eq-prediction, pjw7536/template2,
# BearTDK6/ba-pro, hoon9732/devenv_vault first). Most of them fell back already for another reason;
# the Gemini CLI requests that did not (166) read the naive read on 20, the replay's on 11, neither
# on 135, and the fallback bills them their whole prompt, which the rebuilt one was short of.
SIZED_DOWN = "sized down by a later shrink"
AT_TTL_EDGE = "at the TTL's edge"
# Miss causes the provider model predicts from the recorded timing and events alone: kept where
# the rebuilt prompt is unsure (sim/core/names.py MissCause). A tool list the log records changing
# is such an event: opencode's agent switch (traces/importers/opencode.py; each agent sends its own
# tool definitions, checked on opencode 1.0.98 and 1.18.33 against `ctxbench serve`).
TIMING_CAUSES = frozenset(
    {"ttl_expiry", "first_request", "compaction", "model_switch", "server_lookup_failure", "tools_change"}
)


def zero_block_share(trace: Trace) -> float:
    """Share of the message content blocks the importer sized 0 tokens (None-sized not counted)."""
    sized = [
        c.tokens
        for e in trace.events
        if isinstance(e, MessageEvent)
        for c in e.content
        if c.tokens is not None
    ]
    return sum(1 for t in sized if t == 0) / len(sized) if sized else 0.0


@dataclass
class Unsure:
    """The unsure reasons of one conversation: for the whole of it, and from a request on."""

    whole: list[str] = field(default_factory=list)
    shrink_from: int = -1  # index of the first request after an unlogged shrink (-1: none)
    sized_down: tuple[tuple[int, int], ...] = ()  # [first, end) request spans `RESIZED` names
    ttls: tuple[float, ...] = ()  # entries' lifetimes (s) on Anthropic's cache, `entry_lives` (): elsewhere

    def at(self, index: int, model: str = "", first: str = "", miss: str = "", gap: float = 0.0) -> str:
        """Why request `index`, on `model` in a conversation whose first model is `first`, is
        unsure ("" when it is not); `miss` and `gap` (seconds since the previous request) place a
        `ttl_expiry` break at the TTL's edge (`TTL_EDGE`)."""
        why = list(self.whole)
        if 0 <= self.shrink_from <= index:
            why.insert(0, "unlogged shrink")
        if any(a <= index < b for a, b in self.sized_down):
            why.insert(0, SIZED_DOWN)
        if miss == "ttl_expiry" and 0 <= past_ttl(gap, self.ttls) < TTL_EDGE:
            why.append(AT_TTL_EDGE)
        backend = other_backend(model, first) if model and first else ""
        return ", ".join([*why, backend] if backend else why)


def other_backend(model: str, first: str) -> str:
    """`OTHER_BACKEND` with the vendor when `model` is not of `first`'s vendor (module docstring),
    else ""."""
    try:
        vendor = model_info(model).provider
        if vendor == model_info(first).provider:
            return ""
    except CatalogError:
        return ""
    return f"{OTHER_BACKEND} ({vendor})"


def keeps_timing(why: str) -> bool:
    """Whether a timing break (`TIMING_CAUSES`) stands where the replay is unsure for `why`."""
    return OTHER_BACKEND not in why and AT_TTL_EDGE not in why


def entry_lives(meta: Mapping[str, object]) -> tuple[float, ...]:
    """How long a session's entries live on Anthropic's cache: 5 minutes, and 1 hour too where it
    records 1h marks (`meta.ttl`, the system prompt's; its messages may still be marked 5m)."""
    return (TTL_SECONDS["5m"], TTL_SECONDS["1h"]) if meta.get("ttl") == "1h" else (TTL_SECONDS["5m"],)


def past_ttl(gap: float, ttls: tuple[float, ...]) -> float:
    """Seconds an idle `gap` outlived the longest of the lifetimes `ttls` it outlived (-1: none)."""
    outlived = [t for t in ttls if t <= gap]
    return gap - max(outlived) if outlived else -1.0


def unsure(trace: Trace, provider: str = "") -> Unsure:
    """The reasons of `trace` replayed on a profile of `provider` family (module docstring)."""
    meta = trace.header.meta
    out = Unsure()
    if provider == "anthropic":
        out.ttls = entry_lives(meta)
    if provider in READS_INSIDE_MESSAGES:
        out.whole.append("units end inside messages")
    spans = meta.get(RESIZED)
    if isinstance(spans, list):  # as the importer wrote it; anything else in a hand-made trace is ignored
        pairs = [s for s in spans if isinstance(s, list) and len(s) == 2]
        out.sized_down = tuple((a, b) for a, b in pairs if type(a) is int and type(b) is int)
    if zero_block_share(trace) > ZERO_BLOCKS_SHARE:
        out.whole.append("blocks sized 0")
    if meta.get("unknown_line_types"):
        out.whole.append("unknown line type")
    if meta.get("format") in PROMPT_NOT_LOGGED:
        out.whole.append("prompt as sent not in the log")
    version = str(meta.get("version", "") or "")
    if meta.get("format") == "claude-code" and version and version not in CHECKED_VERSIONS:
        out.whole.append(f"version {version} not checked")
    prev = 0
    compacted = False
    i = -1
    for e in trace.events:
        if isinstance(e, CompactionEvent):
            compacted = True
            continue
        if not isinstance(e, MessageEvent) or e.role == "user":
            continue
        i += 1
        if e.usage is None:
            continue
        total = e.usage.total_input
        if i and not compacted and prev - total > SHRINK_SHARE * prev:
            out.shrink_from = i
            break
        prev, compacted = total, False
    return out


def side_of(q: RequestCompare) -> str:
    """Whom the bill sided with at `q`: the naive read, the replay's own, or neither."""
    replay_ok = abs(q.replay_read - q.billed.cache_read) <= tolerance(q.billed.cache_read)
    return "naive" if q.naive_ok else "replay" if replay_ok else "neither"


def breaks_short(q: RequestCompare) -> bool:
    """Whether the replay's own read at `q` falls short of the naive read: a break it predicts."""
    return q.replay_read < q.naive_read and not near(q.replay_read, q.naive_read)


def naive_only(sf: SessionFidelity) -> str:
    """Where the naive read matched the bill and the replay's prediction did not, by the replay's
    miss cause, most first ("3 ttl_expiry, 1 none named"): the rules a conversation below naive
    lost on."""
    by = Counter(q.miss_cause or "none named" for q in sf.requests if q.naive_ok and not q.ok)
    return ", ".join(f"{n} {cause}" for cause, n in sorted(by.items(), key=lambda x: (-x[1], x[0])))


def rules_line(sessions: list[SessionFidelity]) -> str:
    """The report's line on one part: for every rule that predicts a break (a miss cause), where it
    stands (no fallback), whom the bill sided with. On the development part the rules were made
    from these sessions; on the test part each holds or not on sessions it was not made from."""
    by_cause: dict[str, Counter[str]] = {}
    for sf in sessions:
        for q in sf.baseline.requests:
            if q.index and not q.fallback and breaks_short(q):
                by_cause.setdefault(q.miss_cause or "none named", Counter())[side_of(q)] += 1
    held = "; ".join(
        f"{cause} {c['replay']} / {c['naive']} / {c['neither']}" for cause, c in sorted(by_cause.items())
    )
    return (
        "Breaks the replay predicts short of the naive read where it does not fall back, by miss cause: "
        f"the bill read the replay's read / the naive read / neither: {held or 'none'}."
    )


# What `count_sided` counts where the replay is unsure, each with whom the bill sided (the evidence
# of the reasons that fall back).
NOT_SENT_BREAKS = "breaks in a rebuilt prompt not the one sent"
OTHER_BACKEND_READS = "reads on another backend than the replay's"
SIZED_DOWN_READS = "reads of a request sized down by a later shrink, apart from the naive read"


def count_sided(
    sf: SessionFidelity,
    sided: dict[str, Counter[str]],
    by_cause: dict[str, Counter[str]],
    units: Counter[str] | None = None,
) -> None:
    """Whom the bill sided with where the replay is unsure (module docstring; counted by `python -m
    ctxbench.bench.fidelity.measure`), in `sided` by what is counted: a break it predicts in a
    rebuilt prompt that is not the one sent (`PROMPT_NOT_LOGGED`), any read it predicts apart from
    the naive one on a request served by another backend (`OTHER_BACKEND`) or, with no timing
    cause, on a request sized down by a later shrink (`SIZED_DOWN`); and (`units`) any read with no
    timing cause a storage unit or more apart from the naive one on a cache whose reads end inside
    messages (`READS_INSIDE_MESSAGES`: exactly the billed read, the naive one, or neither); and,
    fallback or not, every break it predicts short of the naive read, by its miss cause (the
    evidence each rule that breaks stands on)."""
    for q in sf.baseline.requests:
        side = side_of(q)
        short = breaks_short(q)
        untimed = q.miss_cause not in TIMING_CAUSES
        if short and q.index:
            by_cause.setdefault(q.miss_cause or "none named", Counter())[side] += 1
        if short and "prompt as sent" in q.unsure and not q.miss_cause:
            sided.setdefault(NOT_SENT_BREAKS, Counter())[side] += 1
        if OTHER_BACKEND in q.unsure and not near(q.replay_read, q.naive_read):
            sided.setdefault(OTHER_BACKEND_READS, Counter())[side] += 1
        if SIZED_DOWN in q.unsure and untimed and q.replay_read != q.naive_read:
            sided.setdefault(SIZED_DOWN_READS, Counter())[side] += 1
        inside = "units end inside messages" in q.unsure and OTHER_BACKEND not in q.unsure
        apart = q.index and untimed and q.replay_read != q.naive_read
        if units is not None and inside and apart:
            b = q.billed.cache_read
            units["naive" if b == q.naive_read else "replay" if b == q.replay_read else "neither"] += 1
