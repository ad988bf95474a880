"""Why a replay on an automatic-prefix cache (OpenAI ≤ 5.5, sim/providers/auto_prefix.py) missed a
recorded read, from the billed usage around the request (the prompt of an OpenAI-style request is
its whole `input_tokens`, FORMATS.md §3).

The replay predicts that a request reads the previous prompt (rounded down to the provider's
128-token steps, providers.md §2.1, or to a model's own coarser grid: `grid`,
bench/fidelity/grids.py) on the one machine the conversation is routed to. Two billed behaviours no
deterministic model of the documented rules predicts, named here with their evidence:
- best-effort routing: "Requests are routed to a machine based on a hash of the initial prefix …
  some may overflow and get routed to additional machines" (providers.md §2.1 [DOC O-PC-old]); a
  request that lands on another machine reads what that machine holds: an older entry of the same
  conversation, or only the instructions prefix that other sessions of the organisation keep warm;
- reads past the previous prompt: the next prompt carries the previous response's reasoning and
  call items back, and the provider served some of those tokens from its cache too (not in
  providers.md; counted per log in the report). On the development part's OpenAI logs 5,542 of
  17,148 requests after a conversation's first read into the previous output, and of the output
  tokens a request could have read (in 128-token steps) 64.4 % were read
  (`python -m ctxbench.bench.fidelity.measure`). How much is read depends on the model: on the
  development part's tool continuations (a request that opens no user turn), the read of the
  previous prompt and output, one 128-token step short of their end, is within tolerance more
  often than the read of the previous prompt on gpt-5.4 (1,316 against 993 of 1,422), gpt-5.3
  (1,332 / 1,171 of 1,760) and gpt-5.1 (2,966 / 2,815 of 4,678); on gpt-5 it makes no difference
  (2,048 / 2,040 of 3,023) and on gpt-5.2 it is worse (3,017 / 3,156 of 4,203). So the profiles
  list gpt-5.1, gpt-5.3 and gpt-5.4 in `output_cached` (a model is listed when that read is
  within tolerance on at least 2 points more of its development continuations; by the same rule
  the zai profile lists glm-4.7, 387 against 369 of 402, sim/data/profiles/zai.yaml), the replay reads
  through the output there (sim/providers/auto_prefix.py) and so does the naive reading
  (`left_cached`, as on DeepSeek); elsewhere a read into the output stays a named cause, inside
  the interval. Reading the mean share of every output on every model, tried before, raised the
  requests within tolerance by 2 points on the development part while it moved the read further
  from the bill.

Tried and not kept, because they did not hold on the test part (measured with the report's
command on the Codex or Gemini CLI rows alone; the first before reads through the output):
- a user turn on GPT-5 to 5.4 predicted as reading only up to the previous turn's first prompt
  (OpenAI's reasoning guide: reasoning items before the last user message are discarded), as the
  fallback where the replay is unsure of the prompt: on the development part the bill read that
  at 512 user turns and the naive read at 17, and Codex requests within tolerance rose from 50.4 %
  to 52.5 %; on the test part from 38.5 % to 39.2 %, but four conversations fell below the naive
  read match by 1 to 3 points and billed cost inside the interval went from 1,286 to 1,263 of
  1,362 conversations. The same rule only where the replay is sure changed nothing (Codex
  rollouts leave it unsure of nearly every prompt);
- Gemini 2.5 Pro (and 2.5 Flash-Lite) reads in blocks of 4,096 (2,048) tokens: the previous prompt
  rounded down to them is within tolerance at 301 (33) of the development part's 1,095 (102) tool
  continuations against 165 (20) for the whole previous prompt (the read lags the prompt by up to
  about 4,400 tokens); Gemini CLI requests within tolerance rose from 14.9 % to 17.3 % there, but
  on the test part went from 11.3 % to 11.3 %, billed cost inside the interval from 178 to 168 of
  185 conversations, and one more conversation fell below the naive read match. The reported
  token counts drift from the blocks' (about 4 % over a 40,000-token prompt), which a fixed block
  size cannot follow.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ctxbench.bench.fidelity.gaps import prompt_of
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.providers.auto_prefix import granular, lists_model, read_grid

STEP = 128  # providers.md §2.1 "Cache hits occur in increments of 128 tokens" [DOC O-PC]
# The central prediction of a replay on an automatic-prefix cache: every request on the home
# machine of its conversation (no overflow draw: how often a request lands elsewhere is the
# measured rate of bench/fidelity/interval.py, which gives the interval around this prediction),
# and the profile's idle lifetime. For Gemini implicit caching (sim/data/profiles/gemini-implicit.yaml
# ttl 240 s) the development part's Gemini CLI logs agree: a request that followed the previous one
# within 300 s read at least half of its prompt 1,679 times of 2,050, after 300 s or more 20 times of
# 172 (six repositories, hoon9732/devenv_vault the largest; `python -m
# ctxbench.bench.fidelity.measure` "gemini retention by idle gap"). The central prediction once kept
# Gemini entries 24 hours, which invented no break the naive reading would not, and missed those
# expiries.
CENTRAL: dict[str, Any] = {"overflow_rpm": None}


def naive_read(prev_prompt: int, prompt: int, minimum: int, step: int) -> int:
    """The naive reading of an automatic-prefix cache: the request reads the previous prompt (all
    of it was cached: writes are free), rounded down to the provider's steps, nothing below the
    minimum, and never more than its own prompt."""
    return granular(min(prev_prompt, prompt), minimum, step)


def grid(cfg: dict[str, Any], model: str, minimum: int) -> tuple[int, int]:
    """The smallest read and the step between reads of `model` on the automatic-prefix profile
    `cfg`: its `granularity` from `minimum`, or the grid its `read_units` give the model
    (sim/providers/auto_prefix.py `read_grid`)."""
    units = tuple((str(m), int(s), int(r)) for m, s, r in cfg.get("read_units", ()) or ())
    return read_grid(units, model, minimum, int(cfg.get("granularity", 1) or 1))


def writes_free(cfg: dict[str, Any]) -> bool:
    """A profile whose provider caches on its own and bills no write (OpenAI-style automatic
    prefixes, DeepSeek's disk cache): what is not read is uncached input, never a write."""
    return str(cfg.get("provider", "")) in ("auto-prefix", "deepseek")


def caches(cfg: dict[str, Any]) -> bool:
    """A profile that caches anything (`no-cache`, ttl 0, does not)."""
    return float(cfg.get("ttl", 1) or 0) > 0


def left_cached(cfg: dict[str, Any], prompt: int, output: int, model: str = "", turn: bool = False) -> int:
    """How much of the conversation a request left readable on a write-free cache: its prompt, and
    on DeepSeek its output too (a unit ends at "the end of the model output", providers.md §4 rule 1;
    on the development part 1,536 of the 1,819 DeepSeek reads after a conversation's first read past
    the previous prompt into its output, 4 past the output: `python -m ctxbench.bench.fidelity.measure`).
    On an automatic-prefix cache, for the models its profile lists in `output_cached`, the output
    less one step of the profile's granularity (128 tokens), unless the next request opens a user
    `turn` (the reasoning that opened the output is dropped then: sim/providers/auto_prefix.py
    `_through_output`)."""
    if cfg.get("provider") == "deepseek":
        return prompt + output
    if not turn and output_cached(cfg, model):  # one step short, as the provider reads it
        return prompt + max(0, output - int(cfg.get("granularity", 1) or 1))
    return prompt


def left_after(cfg: dict[str, Any], prompt: int, output: int, model: str) -> tuple[int, int]:
    """What a request left readable (`left_cached`) for a next tool continuation and for a next
    user turn."""
    return left_cached(cfg, prompt, output, model), left_cached(cfg, prompt, output, model, turn=True)


def output_cached(cfg: dict[str, Any], model: str) -> bool:
    """Whether `model`'s cache on profile `cfg` holds what a response generated (`output_cached`)."""
    listed = (str(m) for m in cfg.get("output_cached", ()) or ())
    return cfg.get("provider") == "auto-prefix" and lists_model(listed, model)


@dataclass
class UnitCounts:
    """DeepSeek reads after the first of a conversation (bench/fidelity/measure.py)."""

    reads: int = 0
    whole_units: int = 0
    into_output: int = 0
    past_output: int = 0


def count_deepseek(sf: SessionFidelity, acc: UnitCounts) -> None:
    """Count how DeepSeek's reads after the first line up with its 128-token storage units and with
    the previous prompt and output (the evidence `left_cached` stands on)."""
    reqs = sf.requests
    for a, b in itertools.pairwise(reqs):
        read = b.billed.cache_read
        if not read:
            continue
        acc.reads += 1
        acc.whole_units += read % 128 == 0
        prompt = prompt_of(a)
        acc.into_output += prompt // 128 * 128 < read <= prompt + a.billed.output_tokens
        acc.past_output += read > prompt + a.billed.output_tokens


def unit_read(left: int, prompt: int, unit: int) -> int:
    """DeepSeek's naive read: what the previous request left, in whole storage units, never more
    than the request's own prompt."""
    u = max(1, unit)
    return min(left, prompt) // u * u


# Cause classes (the text before the first ':' of every cause)
ROUTING = "best-effort routing (providers.md §2.1, not predictable from the log)"
OUTPUT = "generated tokens cached (not in providers.md)"
UNEXPLAINED = "not explained by the log"
KEPT = "kept past its lifetime (chance, drawn in the interval)"


def _prompt(r: RequestCompare) -> int:
    return r.billed.input_tokens + r.billed.cache_read


def _holds(r: RequestCompare, read: int) -> bool:
    """A cache entry request `r` left (its prompt, perhaps with some of its output) serves `read`."""
    return _prompt(r) - STEP < read <= _prompt(r) + r.billed.output_tokens


def auto_prefix_cause(r: RequestCompare, earlier: list[RequestCompare], meta: dict[str, Any]) -> str:
    """The cause of a read mismatch of request `r`, given the requests before it (module docstring)."""
    billed, pred = r.billed.cache_read, r.predicted.cache_read
    warm = int(meta.get("warm_tokens", 0) or 0)
    prev = earlier[-1] if earlier else None
    if billed < pred:
        if warm and abs(billed - warm) < STEP:
            return (
                f"{ROUTING}: routed to another machine, where only the {warm:,}-token instructions "
                "prefix that other sessions of the organisation keep cached was read"
            )
        older = [e for e in earlier[:-1] if _holds(e, billed)]
        if older:
            return (
                f"{ROUTING}: routed to another machine, which holds the entry of request "
                f"#{older[-1].index} but not the later ones"
            )
        return f"{ROUTING}: the read fell back to an earlier prefix with no idle gap (or an eviction)"
    if prev is not None and _prompt(prev) < billed <= _prompt(prev) + prev.billed.output_tokens:
        return (
            f"{OUTPUT}: read {billed - _prompt(prev):,} tokens past the previous prompt, into the "
            f"previous response's output ({prev.billed.output_tokens:,} tokens: reasoning and call "
            "items sent back)"
        )
    if r.miss_cause == "ttl_expiry" and billed > pred:
        return (
            f"{KEPT}: the entry outlived the idle lifetime the replay gives it ({r.gap:,.0f} s idle; "
            "a measured rate, sim/data/profiles: how long an automatic cache keeps an entry is not "
            "published)"
        )
    if meta.get("format") == "gemini-cli" and r.miss_cause == "compaction" and billed > pred:
        return (
            f"{UNEXPLAINED}: the first logged request of a history the CLI replaced read "
            f"{billed - pred:,} tokens more: what a request the CLI did not log had cached (Gemini CLI "
            "does not log the recovery request after its loop detection, traces/importers/gemini_cli.py)"
        )
    if prev is not None and billed > _prompt(prev):
        return (
            f"{UNEXPLAINED}: read {billed - _prompt(prev) - prev.billed.output_tokens:,} tokens more "
            "than the previous prompt and its output hold (part of this prompt was cached before it "
            "was sent: a retry the log does not show?)"
        )
    return f"{UNEXPLAINED}: read more than the previous prompt rounded to 128-token steps"


def evidence(requests: list[RequestCompare]) -> list[str]:
    """What the billed reads of one conversation show about the cache (module docstring)."""
    reads = [r.billed.cache_read for r in requests if r.billed.cache_read]
    out: list[str] = []
    residues = {x % STEP for x in reads}
    if len(reads) > 1 and len(residues) == 1 and residues != {0}:
        c = residues.pop()
        out.append(
            f"every one of the {len(reads)} cached reads is {c} + 128·k tokens (the 128-token steps of "
            "providers.md §2.1 start {c} tokens into the log's count); the replay reports k·128, "
            "within the tolerance, so this offset is not modelled".replace("{c}", str(c))
        )
    past = sum(1 for a, b in itertools.pairwise(requests) if b.billed.cache_read > _prompt(a))
    if past:
        out.append(
            f"{past} of {len(requests) - 1} requests read past the previous prompt (into the previous "
            "response's output)"
        )
    return out
