"""The replay's own model error in a session's 90 % cost interval (issues 28 and 33).

The chance draws of interval.py and auto_interval.py model what the provider does by chance; they
leave out what the replay's model of the client cannot see (a prompt rebuilt from a log that is
not the one sent, a cause the model does not know). That term is measured on the development part
as a split-conformal margin (conformalized quantiles: Romano, Patterson and Candès, "Conformalized
Quantile Regression", NeurIPS 2019, https://arxiv.org/abs/1905.03222): per session, how far the
billed cost fell below the chance interval's low end, and above its high end, relative to the
central value (0 when inside); per stratum, the lower margin is the ⌊(n + 1)·5 %⌋-th smallest of
the n lower scores and the upper margin the ⌈(n + 1)·95 %⌉-th (the largest when n is too small),
so that the widened interval [low + central·lower, high + central·upper] holds the bill of a new
session of the stratum with ≥ 90 % probability when it is exchangeable with the development ones.

Why margins beyond the chance interval, not a draw of billed/central − 1 added to each chance draw:
that residual already holds the chance part, so adding it to the chance draws counts chance twice
(when this was chosen, on the development part the additive draw covered 96 % at a median width of
56 %, Gemini 99 % at 103 %; the margins 94 % at 33 %, and 90 % under a 5-fold cross-validation
grouped by repository; with the relay and DeepSeek cache models, 574/607 at 24.4 % on the
development part and 981/1224 at 30.9 % on the test part, bench/fidelity_report.md). The central
value stays the replay's prediction and the mean (what a part's pooled prediction sums) stays the
chance model's: the margins widen the interval only.

Strata: the cache family (`family`: a relay to Claude models is a family of its own, as it reports
and bills its cache otherwise) by session size (`size_class`): one request, or more. A session
of one request has almost no model error to draw: its read is the warm static prefix taken from the
bill (`meta.warm_tokens`) and its uncached tail and output are billed, so its billed cost equals
the prediction (on the development part's 1,226, billed/central − 1 is 0 at the 5 % and 95 %
quantiles). The exception is a read that ends past the static prefix, inside the messages (an
earlier session's entry of the same history), which the replay cannot place: 13 of the 97
one-request Claude Code sessions on Z.ai, billed up to about 80 % below the central value, give the
"other" one-request stratum its wide lower margin. Sessions of 2-9 and of >= 10 requests erred
alike when measured (Anthropic: 5 % / 95 % quantiles of billed/central − 1 of -0.30 / +0.05 and
-0.28 / +0.12, before the relays had their own cache), and splitting them halved the smaller strata
(OpenAI 2-9: 11 sessions, other: 5 and 7) for no gain in cross-validated coverage (90 % either
way).

A stratum of fewer than `MIN_SESSIONS` development sessions cannot give a 90 % two-sided margin
(the ⌈(n + 1)·95 %⌉-th of n scores exists only from n = 19 on): there the margins are the widest
of the stratum's own and those of every family pooled in its size class (`POOLED`), and the
report says which strata borrowed. On the development part that is `gemini 1` (7 sessions, whose
margins are 0 either way); `other 2+` borrowed while it had 14 sessions, before the corpus grew.

Re-measured by `python -m ctxbench.bench.fidelity.measure --corpus DIR --shared DIR` (its
"model error" lines print `MODEL_ERROR` ready to paste), on the development part only.
"""

from __future__ import annotations

import math

from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.sim.core.catalog import model_info
from ctxbench.traces.importers.backend import RELAY_PROFILE as RELAY

FAMILIES = ("anthropic", "relay", "openai", "gemini", "other")
POOLED = "all"  # every family of a size class together (module docstring)
LEVEL = 0.90
# The fewest scores from which the split-conformal ranks of a two-sided `LEVEL` interval exist:
# ⌈(n + 1)·(1 + LEVEL)/2⌉ <= n first holds at n = 19 (module docstring).
MIN_SESSIONS = 19

# (family, size class) -> (lower margin, upper margin, sessions measured), relative to the central
# value. Development part (traces-real and the corpus's `dev` rows of bench/corpus/sessions.csv),
# 2,976 conversations with per-request usage: `python -m ctxbench.bench.fidelity.measure --corpus
# corpus-data --shared traces-real`. anthropic: Claude Code, claude-trace, Cline and Inspect logs
# on Anthropic (explicit breakpoints); relay: the same on Claude models behind a relay, or in a log
# that records no cache write (bench/fidelity/gateway.py): another accounting, whose errors are its
# own (the development part's 34 relay sessions: margins of -3.9 % and +5.9 %; +77 % while the
# importer read a message's first usage line, where a relay logs an estimate, not the largest as
# ccusage does); openai: Codex CLI and Inspect logs on OpenAI automatic caching; gemini: Gemini
# CLI on implicit caching; other: every other cache (DeepSeek, OpenRouter, a Gemini model or
# endpoint with no measured share); all: the five together, per size class (`POOLED`).
MODEL_ERROR: dict[tuple[str, str], tuple[float, float, int]] = {
    ("anthropic", "1"): (0.0, 0.0, 486),
    ("anthropic", "2+"): (-0.0047, 0.0626, 912),
    ("relay", "1"): (0.0, 0.0, 100),
    ("relay", "2+"): (-0.0388, 0.0589, 34),
    ("gemini", "1"): (0.0, 0.0, 7),
    ("gemini", "2+"): (-0.0837, 0.4153, 103),
    ("openai", "1"): (0.0, 0.0, 480),
    ("openai", "2+"): (-0.0271, 0.1183, 366),
    ("other", "1"): (-0.7954, 0.0, 153),
    ("other", "2+"): (-0.0427, 0.1063, 335),
    ("all", "1"): (0.0, 0.0, 1226),
    ("all", "2+"): (-0.0197, 0.0946, 1750),
}  # fmt: skip


def family(sf: SessionFidelity) -> str:
    """The cache family a session's model error is measured in (module docstring)."""
    if sf.auto_interval is not None:
        return sf.auto_interval.provider if sf.auto_interval.provider in FAMILIES else "other"
    if not sf.auto_provider and model_info(sf.model).provider == "anthropic":
        relay = sf.meta.get("gateway") == RELAY or bool(sf.meta.get("writes_assumption"))
        return "relay" if relay else "anthropic"
    return "other"


def size_class(n: int) -> str:
    """The session-size stratum: one request, or more (module docstring)."""
    return "1" if n <= 1 else "2+"


def stratum(sf: SessionFidelity) -> tuple[str, str]:
    return family(sf), size_class(sf.baseline.n)


def scores(billed: float, central: float, low: float, high: float) -> tuple[float, float]:
    """A session's conformity scores: how far `billed` fell below `low` (<= 0) and above `high`
    (>= 0), relative to `central`."""
    if central <= 0:
        return 0.0, 0.0
    return min(0.0, (billed - low) / central), max(0.0, (billed - high) / central)


def margins(lower: list[float], upper: list[float], level: float = LEVEL) -> tuple[float, float]:
    """The split-conformal margins of one stratum's scores (module docstring): each side at
    (1 - level) / 2, with the finite-sample rank."""
    n = len(lower)
    if not n:
        return 0.0, 0.0
    tail = round((1 - level) / 2, 9)  # 0.05, not 0.04999…: the ranks are exact at whole products
    lo_rank = max(1, math.floor(round((n + 1) * tail, 9)))
    hi_rank = min(n, math.ceil(round((n + 1) * (1 - tail), 9)))
    return sorted(lower)[lo_rank - 1], sorted(upper)[hi_rank - 1]


def widen(sf: SessionFidelity, central: float, low: float, high: float) -> tuple[float, float]:
    """The chance interval `low`..`high` widened by the model-error margins of `sf`'s stratum;
    it always holds `central`, never goes below 0."""
    lower, upper = stratum_margins(stratum(sf))
    return max(0.0, min(central, low + central * lower)), max(central, high + central * upper)


def borrows(key: tuple[str, str]) -> bool:
    """True when stratum `key` has too few development sessions to calibrate alone (module docstring)."""
    return key[0] != POOLED and MODEL_ERROR.get(key, (0.0, 0.0, 0))[2] < MIN_SESSIONS


def stratum_margins(key: tuple[str, str]) -> tuple[float, float]:
    """The margins a session of stratum `key` is widened by: the stratum's own, or where it
    `borrows`, the widest of its own and its size class's pooled ones."""
    lower, upper, _ = MODEL_ERROR.get(key, (0.0, 0.0, 0))
    if borrows(key):
        p_lower, p_upper, _ = MODEL_ERROR.get((POOLED, key[1]), (0.0, 0.0, 0))
        lower, upper = min(lower, p_lower), max(upper, p_upper)
    return lower, upper
