"""A 90 % interval on the cost of a session replayed on an automatic-prefix cache (OpenAI ≤ 5.5
automatic caching, Gemini implicit caching), from a measured rate of finding the cached prefix.

What the providers document is in the replay (sim/providers/auto_prefix.py): a minimum prefix
(OpenAI 1,024 tokens, https://platform.openai.com/docs/guides/prompt-caching; Gemini 2.5+ per
model, https://ai.google.dev/gemini-api/docs/caching), hits in 128-token steps (OpenAI), routing
"based on a hash of the initial prefix" that "does not guarantee stickiness" (same OpenAI page;
https://cookbook.openai.com/examples/prompt_caching_201) and retention (OpenAI in memory "5 to 10
minutes of inactivity", extended "up to a maximum of 24 hours"). Its central prediction is that a
request reads what the previous one left (its prompt, rounded to the steps) on the machine the
conversation is routed to. What no document gives is how often a request lands elsewhere: that is
`FOUND`, a rate measured on real logs, each cited next to its constant.

How much of what the central prediction reads the provider did not find varies from one
conversation to another (on the development part: -7 % to 54 % on OpenAI, -58 % to 91 % on Gemini,
-17 % to 14 % on Z.ai) and is not predictable from a log. So the session's cost is a distribution
over that share: its cost with every request after the first reading `1 - share` of its central
read, at each measured 5 % quantile of the share (`LOST_SHARE`). The cost grows with the share, so
the 5 % and 95 % quantiles bound the 90 % interval and the median share gives the central value
(the session's predicted cost). The session's cost is linear in the share, so its mean (what a
part's pooled prediction sums) is its cost at the mean share (`MEAN_SHARE`: the pooled share of
what the development part's central reads save that the bill did not save). The share is weighted
by that saving, not by tokens: a token read saves 2x as much on a Gemini 2.5 Pro prompt over
200,000 tokens as below it, and 12x as much on 2.5 Pro as on 2.5 Flash-Lite, and the lost share is
not the same on each (dev part: long 2.5 Pro prompts read slightly more than the central read, short
ones lost 20 %). Token-weighted, the dev part's pooled Gemini cost at the mean share was +7.4 % of
the bill with its reads pooled right (`read_saving`). It is measured as such, not
taken as the mean of the interpolated 5 % quantiles: the share is heavy-tailed, and the
interpolation spreads the largest (OpenAI: one conversation, 0.12 % of the reads, that lost 54 %)
over the top 5 % of the distribution, which put the mean share at 4.2 % where the reads lost 3.2 %
(Codex on the 2025 development part, when this was chosen: pooled cost +4.9 % with the
interpolated mean, +0.6 % at the measured mean). Deterministic: no draw.

Every constant is re-measured by `python -m ctxbench.bench.fidelity.measure --corpus DIR
--shared DIR` on the development part (bench/corpus/README.md), never on the test part.
"""

from __future__ import annotations

from typing import Any

from ctxbench.bench.fidelity.gaps import prompt_of
from ctxbench.bench.fidelity.results import AutoInterval, RequestCompare, SessionFidelity
from ctxbench.sim.core.catalog import prices

# Per conversation of >= 10 requests of the development part (`python -m
# ctxbench.bench.fidelity.measure`), the share of what the central prediction's cached reads save
# that the bill's reads did not save (net of reads past it; below 0: it read more), weighted by
# that saving (the share of a dollar; its mean is the pooled share): its 0 %, 5 %, ..., 100 %
# quantiles.
# OpenAI: 296 conversations (Codex CLI rollouts of the `dev` rows of bench/corpus/sessions.csv,
# 2025-2026, and traces-real codex-tui and inspect-ai); over all 850, 12,345 requests after a first
# read what the central prediction says and 4,803 read less (654 only the static prefix, 1,929 an
# older entry of the conversation, 2,220 neither).
# Z.ai (Claude Code on zai's Anthropic-compatible endpoint, glm-4.x/5.x, the `dev` rows): 94
# conversations (8 more ran on the free glm-4.7-flash, whose reads save nothing: no weight); over
# all 291, 5,951 requests read what the central prediction says and 188 read less (48 only the
# static prefix, 40 an older entry, 100 neither). Moonshot has none: 4 development conversations of
# 10 requests or more, too few for a 90 % interval (a share is kept for a cache measured on at
# least 19).
# Gemini (implicit caching, Gemini CLI chats of the `dev` rows): 43 conversations; over all 110,
# 457 requests read what the central prediction says and 1,765 read less (14 only the static
# prefix, 368 an older entry, 1,383 neither): implicit caching finds far less than a prefix cache
# that keeps every prompt would ("no cost saving guarantee",
# https://ai.google.dev/gemini-api/docs/caching). Measured with the central prediction's 240 s
# lifetime (auto.py); with a 24-hour one it was 299 and 1,923.
LOST_SHARE: dict[str, tuple[float, ...]] = {
    "gemini": (
        -0.5816, 0.0004, 0.0004, 0.0004, 0.0004, 0.0004, 0.0004, 0.0934, 0.0996, 0.1094, 0.1098,
        0.1098, 0.2202, 0.2431, 0.2431, 0.2431, 0.2431, 0.2551, 0.3137, 0.4366, 0.9144,
    ),
    "openai": (
        -0.0684, 0.0094, 0.011, 0.0159, 0.0176, 0.0182, 0.0194, 0.0213, 0.0245, 0.0292, 0.0338,
        0.039, 0.0465, 0.0518, 0.055, 0.0599, 0.0634, 0.0718, 0.089, 0.1211, 0.5433,
    ),
    "zai": (
        -0.1718, -0.0073, -0.0073, -0.0024, -0.0022, 0.0001, 0.0003, 0.0003, 0.0005, 0.0024, 0.0061,
        0.0102, 0.0107, 0.0154, 0.0171, 0.0198, 0.0205, 0.0232, 0.0273, 0.0409, 0.141,
    ),
}  # fmt: skip
# The saving-weighted mean of the same shares (the development part's pooled share: what its
# central reads save that the bill did not, net, over what they save), same conversations and command.
MEAN_SHARE: dict[str, float] = {"gemini": 0.151, "openai": 0.0436, "zai": 0.0112}
LEVEL = 0.90
# providers a log's endpoint must name for its share to apply (the Codex logs' model_provider):
# a log recorded against another endpoint (e.g. `ctxbench serve`, model_provider "mock") is not
# the provider's cache
# The cache whose measured share a profile draws from: OpenAI's and Gemini's own caches by their
# provider, any other automatic-prefix cache (zai, moonshot) by its own profile name. Never by the
# wire dialect it speaks: zai and moonshot answer in OpenAI's chat shape, but theirs is not OpenAI's
# cache (taking it for one put 84 Claude Code conversations on glm models, 555M read tokens, into
# OpenAI's measured share and drew their intervals from it).
CACHE_OF_PROFILE = {"openai-auto": "openai", "openai-auto-inmemory": "openai", "gemini-implicit": "gemini"}


def cache_of(profile: str) -> str:
    """The name a profile's measured share is kept under (`LOST_SHARE`, `MEAN_SHARE`)."""
    return CACHE_OF_PROFILE.get(profile, profile)


def measured_share(provider: str, meta: dict[str, Any]) -> tuple[float, ...] | None:
    """The measured quantiles of the lost share for a log served by `provider`, or None: none
    measured for it, or the log names another endpoint."""
    endpoint = str(meta.get("model_provider", "") or "").lower()
    if endpoint and endpoint != provider:
        return None
    return LOST_SHARE.get(provider)


def auto_interval(sf: SessionFidelity, provider: str) -> AutoInterval | None:
    """The session's predicted cost and 90 % interval (module docstring), or None when no share
    is measured for this provider and endpoint."""
    qs = measured_share(provider, sf.meta)
    if qs is None or not sf.requests:
        return None
    costs = [_cost(sf, s) for s in qs]
    n = len(costs) - 1
    mean = _cost(sf, MEAN_SHARE[provider])  # linear in the share: the cost at the mean share
    tail = round((1 - LEVEL) / 2 * n)
    shares = (qs[tail], qs[n // 2], qs[n - tail])
    return AutoInterval(costs[tail], costs[n - tail], mean, provider, shares, costs[n // 2])


def read_saving(r: RequestCompare, model: str, tokens: int) -> float:
    """What reading `tokens` of request `r`'s prompt from the cache saves against sending them
    uncached, at the request's own model and price tier (a long-context tier by its prompt)."""
    p, prompt = prices(r.model or model), prompt_of(r)
    return p.cost(prompt, 0, 0, 0, 0) - p.cost(prompt - tokens, tokens, 0, 0, 0)


def prompt_sent(sf: SessionFidelity, r: RequestCompare) -> int:
    """The prompt request `r` sent in the prediction the interval is drawn around. A replay of what
    was recorded takes every prompt's size from the bill (its blocks are sized so: the report's
    "taken from the bill"), so it is the billed prompt. A policy (`sf.track`: its own prediction,
    bench/fidelity/policy.py) sends its own context, which a preset that compacts elsewhere, or
    replays a log whose first rounds are sized 0, makes smaller or larger than the bill's: its
    predicted read, writes and uncached input, as its deterministic cost (`cost_predicted`) prices it."""
    if sf.track is None:
        return r.billed.input_tokens + r.billed.cache_read
    p = r.predicted
    return r.input_predicted + p.cache_read + p.cache_write_5m + p.cache_write_1h


def _cost(sf: SessionFidelity, share: float) -> float:
    """The session's cost when every request after the first reads `1 - share` of its central read
    (its prompt, `prompt_sent`, less that read sent uncached)."""
    cost = 0.0
    for k, r in enumerate(sf.requests):
        prompt = prompt_sent(sf, r)
        read = r.predicted.cache_read if not k else min(prompt, int(r.predicted.cache_read * (1 - share)))
        cost += prices(r.model or sf.model).cost(prompt - read, read, 0, 0, r.billed.output_tokens)
    return cost
