"""H-8's measured figure with the model it was measured on: "when only the two newest were kept,
each new screenshot cost 20–47k uncached tokens (GLM 5.3 Flash, 2026-10-11)" (seed 000), and
the GLM 5.3 Flash profile it needs (sim/data/models.yaml, prices.yaml, profiles/zai.yaml)."""

from __future__ import annotations

from functools import cache

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.catalog import default_profile, model_info, prices, resolve
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.runner import run_trace
from ctxbench.traces.generators import generate
from ctxbench.traces.model import Trace

GLM = "glm-5.3-flash"


def test_h8_glm_5_3_flash_profile_has_cited_prices_and_z_ai_caching() -> None:
    """Prices from docs.venice.ai/models/glm-5-3-flash and the Codeep v2.25.0 release notes
    ($0.15 in / $0.50 out per 1M); cached input $0.03 (reseller model pages; Z.ai's documented
    1/5 hit price); no write fee (storage free). Served by Z.ai's automatic caching; 1M window;
    images by GLM-5.3's 28-px patch processor."""
    p = prices(GLM)
    assert (p.input, p.output, p.cache_read, p.cache_write_5m) == (0.15, 0.50, 0.03, 0.15)
    assert p.cache_read == pytest.approx(p.input / 5)
    info = model_info(GLM)
    assert (info.window, info.max_output, info.image_rule) == (1_000_000, 128_000, "glm")
    assert default_profile(GLM) == "zai"
    for spelled in ("z-ai/glm-5.3-flash", "zai-org/glm-5.3-flash", "z-ai-glm-5-3-flash"):
        assert resolve(spelled).key == GLM


@cache
def keep_last_2(
    budget: int, image_change: str = ""
) -> tuple[list[RequestRecord], dict[int, tuple[int, int]]]:
    """h-keep-last-2 with GLM 5.3 Flash on Z.ai's cache over the 300-turn sample's generator
    trace (the profile's `image_change` unless given); per request that replaced a screenshot also
    (tokens before the new placeholder, read)."""
    trace: Trace = generate("game", turns=300, seed=0)
    seen: dict[int, tuple[int, int]] = {}

    def on_call(req: Request, out: Outcome) -> None:
        tr = req.tr
        start = req.n if tr.changed_from is None else tr.changed_from
        at = next((i for i in range(start, req.n) if tr.blocks[i].placeholder), None)
        if at is not None:
            seen[req.index] = (tr.tokens_before(at), out.usage.cache_read)

    policy = load_policy("h-keep-last-2").with_budget(budget)
    params = {"image_change": image_change} if image_change else None
    result = run_trace(trace, policy, "zai", model=GLM, provider_params=params, on_call=on_call)
    return result.records, seen


def test_h8_glm_keep_last_2_rebills_from_the_evicted_screenshot_under_the_documented_rule() -> None:
    """Z.ai documents automatic caching of content repeated from earlier requests, not how hits
    are matched (profiles/zai.yaml): its documented behaviour is a read of the longest identical
    prefix (`image_change: none`, not the profile's setting: see below). Under that
    rule each new screenshot (keep-last-2 replaces the third newest by a placeholder) bills
    exactly what follows the replaced screenshot, uncached: two screenshot intervals, 3-6k tokens
    on the generator's H trace, whatever the budget. That is 5-10x less than the 20-47k measured."""
    for budget in (80_000, 120_000):
        records, seen = keep_last_2(budget, "none")
        evictions = [r for r in records if r.edit == "eviction"]
        assert len(evictions) >= 240 and all(r.miss_cause == "eviction" for r in evictions)
        for r in evictions:
            before, read = seen[r.index]
            assert read == before  # the cache reads up to the replaced screenshot, nothing after
        uncached = sorted(r.uncached for r in evictions)
        assert uncached[0] >= 3_000 and uncached[-1] <= 6_000


def test_h8_glm_measured_20_to_47k_is_the_whole_prompt_at_a_78k_budget() -> None:
    """What makes the measured range appear. A new screenshot's uncached tokens are the prompt
    minus what the cache still reads. Under the documented prefix rule that is 3-6k (above); the
    measured 20-47k is instead the size of the WHOLE prompt of those requests, between the
    new conversation after a compaction (system, tools, pinned preparation exchange, handoff,
    last reply, fresh screenshot; ~16k in the generator's trace, ~20k in the measured run) and
    the prompt at the compaction trigger (65 % of the working budget by H's estimate, which errs
    high: ~47k true tokens at a 78k budget). So the range reproduces when the cache re-reads
    nothing of a prompt in which an earlier screenshot was replaced: on this trace, at a 78k
    budget, from the first compaction on. Z.ai does not document such a rule; its measured run
    behaved as if its cache had one (the profile's `image_change: all`, profiles/zai.yaml, and
    the test below)."""
    records, _seen = keep_last_2(78_000)
    first = next(i for i, r in enumerate(records) if r.kind == "summary")
    prompts = sorted(r.true_input for r in records[first:] if r.edit == "eviction")
    assert len(prompts) >= 190
    low, high = prompts[len(prompts) // 20], prompts[-1]  # 5th percentile and the largest
    assert 15_000 <= low <= 20_000  # the new conversation after a compaction
    assert 45_000 <= high <= 49_000  # the trigger: 20-47k's upper end
    inside = sum(20_000 <= p <= 47_000 for p in prompts) / len(prompts)
    assert inside >= 0.75


def test_h8_glm_profile_reproduces_20_to_47k_per_new_screenshot() -> None:
    """The zai profile's `image_change: all` (profiles/zai.yaml, observed in H-8's measured run): a
    prompt whose images do not extend the previous request's reads nothing, so under keep-last-2
    each new screenshot's uncached tokens are the whole prompt: 20-47k at a 78k budget, as
    measured. Anthropic's documented rule ("messages": tools + system still read) falls short
    of the lower end."""
    records, _seen = keep_last_2(78_000)
    uncached = sorted(r.uncached for r in records if r.edit == "eviction")
    assert len(uncached) >= 240
    inside = sum(20_000 <= u <= 47_000 for u in uncached) / len(uncached)
    assert inside >= 0.75 and 45_000 <= uncached[-1] <= 49_000
    messages, _ = keep_last_2(78_000, "messages")
    low = sorted(r.uncached for r in messages if r.edit == "eviction")
    assert sum(20_000 <= u <= 47_000 for u in low) / len(low) < inside
    # batch eviction (H-9) keeps its one miss per batch: appending images never loses the cache
    trace = generate("game", turns=300, seed=0)
    batch = run_trace(trace, load_policy("h-direct").with_budget(78_000), "zai", model=GLM).records
    lost = [r for r in batch if r.cache_read == 0]
    assert sum(r.edit == "eviction" for r in batch) >= 5
    assert all(r.edit in ("eviction", "compaction") or r.miss_cause == "first_request" for r in lost)
