"""The late-2026 catalog rows (sim/data/models.yaml, prices.yaml): Claude 5.x, GPT-6.x, Gemini 4 /
3.8, DeepSeek V4; and the older ids real logs carry (Claude 3 / 3.5, the GPT-5.1 Codex variants
to GPT-5.5 of Codex CLI logs, o1 / o3-pro / codex-mini-latest, Gemini 2.0 Flash, DeepSeek V3.2).
Every number below is the one the YAML row cites (its comment names the page); these tests pin
that the rows say what their sources say and that every id spelling reaches them."""

from __future__ import annotations

import pytest

from ctxbench.sim.core.catalog import CatalogError, Prices, canonical, default_profile, model_info, prices


def five(p: Prices) -> tuple[float, float, float, float, float]:
    """(input, 5m write, 1h write, cache read, output) USD per MTok."""
    return (p.input, p.cache_write_5m, p.cache_write_1h, p.cache_read, p.output)


# id as written -> catalog name (key plus -fast / [1m] variant)
SPELLINGS = [
    # Anthropic: API id, dotted (Cline / OpenRouter), routed, Bedrock, [1m], -fast
    ("claude-opus-5-5", "claude-opus-5-5"),
    ("claude-opus-5.5", "claude-opus-5-5"),
    ("anthropic/claude-opus-5.5", "claude-opus-5-5"),
    ("anthropic.claude-opus-5-5", "claude-opus-5-5"),
    ("claude-opus-5-5[1m]", "claude-opus-5-5[1m]"),
    ("claude-opus-5.5-fast", "claude-opus-5-5-fast"),
    ("claude-sonnet-5-5", "claude-sonnet-5-5"),
    ("anthropic/claude-sonnet-5.5", "claude-sonnet-5-5"),
    ("claude-haiku-5-5", "claude-haiku-5-5"),
    ("anthropic.claude-haiku-5-5", "claude-haiku-5-5"),  # Bedrock id (apidog Haiku 5.5 guide)
    ("claude-haiku-5-5[1m]", "claude-haiku-5-5[1m]"),
    ("claude-fable-5-2", "claude-fable-5-2"),
    ("claude-fable-5.2-fast", "claude-fable-5-2-fast"),
    ("claude-mythos-5-2", "claude-mythos-5-2"),
    ("claude-fable-5-1", "claude-fable-5-1"),
    ("claude-mythos-5-1", "claude-mythos-5-1"),
    ("claude-fable-5", "claude-fable-5"),
    ("global.anthropic.claude-fable-5", "claude-fable-5"),  # Bedrock global profile (andisearch/airun v2.6.0)
    ("anthropic.claude-fable-5", "claude-fable-5"),  # models overview: Bedrock ID
    ("claude-mythos-5", "claude-mythos-5"),
    ("claude-opus-5-fast", "claude-opus-5-fast"),
    ("claude-sonnet-5[1m]", "claude-sonnet-5[1m]"),
    # OpenAI: API id, routed, a dated spelling (rule 7; OpenAI publishes no dated GPT-6 ids)
    ("gpt-6.2-astra", "gpt-6.2-astra"),
    ("openai/gpt-6.2-astra", "gpt-6.2-astra"),
    ("gpt-6.2-sol", "gpt-6.2-sol"),
    ("gpt-6.1-sol", "gpt-6.1-sol"),
    ("gpt-6.1-terra", "gpt-6.1-terra"),
    ("gpt-6-astra", "gpt-6-astra"),
    ("gpt-6-sol", "gpt-6-sol"),
    ("gpt-6-sol-2026-09-22", "gpt-6-sol"),
    ("openai/gpt-6-luna", "gpt-6-luna"),
    ("gpt-5.6", "gpt-5.6-sol"),  # alias (docs.apiyi.com: "the gpt-5.6 alias points to it")
    ("gpt-5.6-luna", "gpt-5.6-luna"),
    # Gemini
    ("gemini-4-argon", "gemini-4-argon"),
    ("google/gemini-3.8-flash", "gemini-3.8-flash"),
    # DeepSeek: current name, legacy names served by V4.1 Flash, routed
    ("deepseek-flash", "deepseek-flash"),
    ("deepseek-v4-flash", "deepseek-flash"),
    ("deepseek-v4-flash-vision-exp", "deepseek-flash"),
    ("deepseek/deepseek-v4-pro", "deepseek-v4-pro"),
    # Older ids of real logs. Claude 3 / 3.5: dated API ids, -latest, routed, Bedrock, Vertex
    ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
    ("claude-3-5-sonnet-20240620", "claude-3-5-sonnet"),
    ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
    ("anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"),
    ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
    ("claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"),
    ("claude-3-opus-20240229", "claude-3-opus"),
    ("claude-3-opus-latest", "claude-3-opus"),
    # OpenAI: the ids Codex CLI logs carry, dated snapshots, routed
    ("gpt-5.1-codex-max", "gpt-5.1-codex-max"),
    ("openai/gpt-5.1-codex-max", "gpt-5.1-codex-max"),
    ("gpt-5.1-codex-mini", "gpt-5.1-codex-mini"),
    ("gpt-5.2", "gpt-5.2"),
    ("gpt-5.2-2025-12-11", "gpt-5.2"),
    ("gpt-5.2-codex", "gpt-5.2-codex"),
    ("gpt-5.3-codex", "gpt-5.3-codex"),
    ("gpt-5.4", "gpt-5.4"),
    ("gpt-5.4-2026-03-05", "gpt-5.4"),
    ("gpt-5.4-mini", "gpt-5.4-mini"),
    ("gpt-5.4-mini-2026-03-17", "gpt-5.4-mini"),
    ("gpt-5.4-nano-2026-03-17", "gpt-5.4-nano"),
    ("gpt-5.5", "gpt-5.5"),
    ("gpt-5.5-2026-04-23", "gpt-5.5"),
    ("gpt-5-pro-2025-10-06", "gpt-5-pro"),
    ("gpt-5.2-pro", "gpt-5.2-pro"),
    ("gpt-5.4-pro-2026-03-05", "gpt-5.4-pro"),
    ("gpt-5.5-pro", "gpt-5.5-pro"),
    ("codex-mini-latest", "codex-mini-latest"),
    ("openai/codex-mini", "codex-mini-latest"),
    ("o1", "o1"),
    ("o1-2024-12-17", "o1"),
    ("o1-preview-2024-09-12", "o1-preview"),
    ("o3-pro-2025-06-10", "o3-pro"),
    # Gemini 2.0 Flash; DeepSeek V3.2 (the model deepseek-chat served)
    ("gemini-2.0-flash", "gemini-2.0-flash"),
    ("gemini-2.0-flash-001", "gemini-2.0-flash"),
    ("google/gemini-2.0-flash-001", "gemini-2.0-flash"),
    ("deepseek-v3.2", "deepseek-chat"),
    ("deepseek/deepseek-v3.2-exp", "deepseek-chat"),
]


@pytest.mark.parametrize(("given", "name"), SPELLINGS)
def test_every_spelling_reaches_its_row(given: str, name: str) -> None:
    assert canonical(given) == name
    assert model_info(given).name == name
    assert prices(given).input > 0


# key -> (provider, window, min_cacheable, max_output, tokenizer_scale), as cited in models.yaml
PROFILES = {
    "claude-opus-5-5": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-sonnet-5-5": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-haiku-5-5": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-fable-5-2": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-mythos-5-2": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-fable-5-1": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-mythos-5-1": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-fable-5": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-mythos-5": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-opus-5": ("anthropic", 200_000, 512, 128_000, 1.3),
    "claude-sonnet-5": ("anthropic", 200_000, 1024, 128_000, 1.3),
    "gpt-6.2-astra": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-6.2-sol": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-6.1-sol": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-6.1-terra": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-6-astra": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-6-sol": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-6-luna": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-5.6-luna": ("openai", 272_000, 1024, 128_000, 1.0),
    "gemini-4-argon": ("gemini", 1_048_576, 4096, 65_536, 1.0),
    "gemini-3.8-flash": ("gemini", 1_048_576, 4096, 65_536, 1.0),
    "deepseek-flash": ("deepseek", 1_000_000, 64, 384_000, 1.0),
    "deepseek-v4-pro": ("deepseek", 1_000_000, 64, 384_000, 1.0),
    # older ids of real logs
    "claude-3-5-sonnet": ("anthropic", 200_000, 1024, 8192, 1.0),  # models overview 2025; prompt-caching 2025
    "claude-3-opus": ("anthropic", 200_000, 1024, 4096, 1.0),
    "gpt-5.1-codex-max": ("openai", 272_000, 1024, 128_000, 1.0),  # Codex 272K convention
    "gpt-5.1-codex-mini": ("openai", 272_000, 1024, 128_000, 1.0),
    "gpt-5.2": ("openai", 272_000, 1024, 128_000, 1.0),
    "gpt-5.2-codex": ("openai", 272_000, 1024, 128_000, 1.0),  # OAI "Maximum input tokens: 272,000"
    "gpt-5.3-codex": ("openai", 272_000, 1024, 128_000, 1.0),
    "gpt-5.4": ("openai", 922_000, 1024, 128_000, 1.0),  # 1,050,000 context - 128,000 output
    "gpt-5.4-mini": ("openai", 272_000, 1024, 128_000, 1.0),
    "gpt-5.4-nano": ("openai", 272_000, 1024, 128_000, 1.0),
    "gpt-5.5": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-5-pro": ("openai", 272_000, 1024, 272_000, 1.0),  # OAI "272,000 max output tokens"
    "gpt-5.2-pro": ("openai", 272_000, 1024, 128_000, 1.0),
    "gpt-5.4-pro": ("openai", 922_000, 1024, 128_000, 1.0),
    "gpt-5.5-pro": ("openai", 922_000, 1024, 128_000, 1.0),
    "o1": ("openai", 200_000, 1024, 100_000, 1.0),
    "o1-preview": ("openai", 128_000, 1024, 32_768, 1.0),
    "o3-pro": ("openai", 200_000, 1024, 100_000, 1.0),
    "codex-mini-latest": ("openai", 200_000, 1024, 100_000, 1.0),
    "gemini-2.0-flash": ("gemini", 1_048_576, 4096, 8192, 1.0),
}


@pytest.mark.parametrize("key", sorted(PROFILES))
def test_profiles_are_the_cited_values(key: str) -> None:
    i = model_info(key)
    assert (i.provider, i.window, i.min_cacheable, i.max_output, i.tokenizer_scale) == PROFILES[key]


@pytest.mark.parametrize(
    "key", [k for k, v in PROFILES.items() if v[0] == "anthropic" and not k.startswith("claude-3-")]
)
def test_claude_5_rows_open_the_1m_window(key: str) -> None:
    # every Claude 5.x overview page: "Context window 1M tokens"; the high-res image tier (§1.13)
    assert model_info(key + "[1m]").window == 1_000_000
    assert model_info(key).image_rule == "anthropic-highres"


def test_new_openai_rows_cache_at_breakpoints() -> None:
    # providers.md §2.2: GPT-5.6 and later bill breakpoint caching
    gpt6 = ("gpt-6.2-astra", "gpt-6.2-sol", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-astra", "gpt-6-sol")
    for key in (*gpt6, "gpt-6-luna", "gpt-5.6-luna"):
        assert default_profile(key) == "openai-breakpoints", key
    assert default_profile("gemini-4-argon") == "gemini-implicit"
    assert default_profile("deepseek-v4-flash") == "deepseek"


# key -> (input, 5m write, 1h write, read, output) USD/MTok, as cited in prices.yaml
RATES = {
    "claude-opus-5-5": (4.00, 5.00, 8.00, 0.20, 20.00),  # OV(opus-5-5)
    "claude-sonnet-5-5": (2.00, 2.50, 4.00, 0.10, 10.00),  # OV(sonnet-5-5); read cut 2026-10-07 (3P)
    "claude-haiku-5-5": (0.10, 0.125, 0.20, 0.01, 0.50),  # <=100K tier (OV + 3P)
    "claude-fable-5-2": (8.00, 10.00, 16.00, 0.20, 40.00),  # 3P
    "claude-mythos-5-2": (8.00, 10.00, 16.00, 0.20, 40.00),  # 3P + writes assumed = Fable 5.2
    "claude-fable-5-1": (10.00, 12.50, 20.00, 0.25, 50.00),  # pricing page
    "claude-mythos-5-1": (10.00, 12.50, 20.00, 0.25, 50.00),
    "claude-fable-5": (10.00, 12.50, 20.00, 1.00, 50.00),  # pricing page (mirror)
    "claude-mythos-5": (10.00, 12.50, 20.00, 1.00, 50.00),
    "claude-opus-5": (5.00, 6.25, 10.00, 0.50, 25.00),
    "claude-sonnet-5": (2.00, 2.50, 4.00, 0.20, 10.00),
    "gpt-6.2-astra": (8.00, 10.00, 10.00, 0.40, 40.00),  # OpenAI rows: no 1h write, it equals the 30-min one
    "gpt-6.2-sol": (2.00, 2.50, 2.50, 0.10, 10.00),
    "gpt-6.1-sol": (2.00, 2.50, 2.50, 0.10, 10.00),
    "gpt-6.1-terra": (1.00, 1.25, 1.25, 0.05, 5.00),
    "gpt-6-astra": (10.00, 12.50, 12.50, 1.00, 50.00),
    "gpt-6-sol": (2.00, 2.50, 2.50, 0.20, 10.00),
    "gpt-6-luna": (0.10, 0.125, 0.125, 0.01, 0.50),
    "gpt-5.6-luna": (0.20, 0.25, 0.25, 0.02, 1.20),
    "gemini-4-argon": (4.00, 4.00, 4.00, 0.20, 20.00),  # from 2026-12-01
    "gemini-3.8-flash": (0.75, 0.75, 0.75, 0.075, 3.75),
    "deepseek-flash": (0.30, 0.30, 0.30, 0.006, 1.20),  # peak
    "deepseek-v4-pro": (1.32, 1.32, 1.32, 0.044, 3.96),  # peak
    # older ids of real logs (OpenAI and Gemini: no write fee, both writes = input)
    "claude-3-5-sonnet": (3.00, 3.75, 6.00, 0.30, 15.00),  # A-PRICE Claude Sonnet 3.5 row
    "claude-3-opus": (15.00, 18.75, 30.00, 1.50, 75.00),  # A-PRICE Claude Opus 3 row
    "gpt-5.1-codex-max": (1.25, 1.25, 1.25, 0.125, 10.00),  # 3P only
    "gpt-5.1-codex-mini": (0.25, 0.25, 0.25, 0.025, 2.00),  # OAI page
    "gpt-5.2": (1.75, 1.75, 1.75, 0.175, 14.00),  # GitHub Copilot table
    "gpt-5.2-codex": (1.75, 1.75, 1.75, 0.175, 14.00),  # OAI page
    "gpt-5.3-codex": (1.75, 1.75, 1.75, 0.175, 14.00),  # GitHub Copilot table
    "gpt-5.4": (2.50, 2.50, 2.50, 0.25, 15.00),  # OAI page
    "gpt-5.4-mini": (0.75, 0.75, 0.75, 0.075, 4.50),  # GitHub Copilot table
    "gpt-5.4-nano": (0.20, 0.20, 0.20, 0.02, 1.25),  # OAI page
    "gpt-5.5": (5.00, 5.00, 5.00, 0.50, 30.00),  # OAI page
    "gpt-5-pro": (15.00, 15.00, 15.00, 15.00, 120.00),  # OAI page: no cached-input rate
    "gpt-5.2-pro": (21.00, 21.00, 21.00, 21.00, 168.00),
    "gpt-5.4-pro": (30.00, 30.00, 30.00, 30.00, 180.00),
    "gpt-5.5-pro": (30.00, 30.00, 30.00, 30.00, 180.00),  # "does not offer a cached input discount"
    "o1": (15.00, 15.00, 15.00, 7.50, 60.00),  # 3P; cached as o1-preview's
    "o1-preview": (15.00, 15.00, 15.00, 7.50, 60.00),  # OAI page
    "o3-pro": (20.00, 20.00, 20.00, 20.00, 80.00),  # OAI page: no cached-input rate
    "codex-mini-latest": (1.50, 1.50, 1.50, 0.375, 6.00),  # OAI page
    "gemini-2.0-flash": (0.10, 0.10, 0.10, 0.025, 0.40),  # Gemini pricing page
}


@pytest.mark.parametrize("key", sorted(RATES))
def test_prices_are_the_cited_values(key: str) -> None:
    p = prices(key)
    assert five(p) == RATES[key]
    assert p.source and p.date


def test_gpt_5_6_sol_keeps_its_list_price_through_the_alias() -> None:
    # providers.md §2.2 list price; the $4/$20 promotion is not taken (see the row's source)
    assert (prices("gpt-5.6").input, prices("gpt-5.6").output) == (5.00, 30.00)


# key -> (threshold, long-tier input, 5m write, read, output)
LONG = {
    "claude-haiku-5-5": (100_000, 0.50, 0.625, 0.05, 2.50),  # 3P claudit v1.9.2
    "gpt-6.2-astra": (272_000, 16.00, 20.00, 0.80, 60.00),  # 3P TokenMeter v0.17.0
    "gpt-6.2-sol": (272_000, 4.00, 5.00, 0.20, 15.00),  # OAI(gpt-6.2-sol) rule
    "gpt-6.1-sol": (272_000, 4.00, 5.00, 0.20, 15.00),
    "gpt-6.1-terra": (272_000, 2.00, 2.50, 0.10, 7.50),
    "gpt-6-astra": (272_000, 20.00, 25.00, 2.00, 75.00),
    "gpt-6-sol": (272_000, 4.00, 5.00, 0.40, 15.00),
    "gpt-6-luna": (272_000, 0.20, 0.25, 0.02, 0.75),
    "gpt-5.4": (272_000, 5.00, 5.00, 0.50, 22.50),  # OAI rule 2x / 1.5x; GitHub Copilot > 272K row
    "gpt-5.5": (272_000, 10.00, 10.00, 1.00, 45.00),
    "gpt-5.4-pro": (272_000, 60.00, 60.00, 60.00, 270.00),  # OAI rule on $30 / $180
}


@pytest.mark.parametrize("key", sorted(LONG))
def test_long_context_tier_applies_only_above_its_threshold(key: str) -> None:
    above, inp, w5, read, out = LONG[key]
    p = prices(key)
    assert p.above == above and p.long_context is not None
    lc = p.long_context
    assert (lc.input, lc.cache_write_5m, lc.cache_read, lc.output) == (inp, w5, read, out)
    # at the threshold: base rates; one token over: the whole request (output included) at the tier
    at = p.cost(above - 1000, 1000, 0, 0, 1000)
    assert at == pytest.approx(((above - 1000) * p.input + 1000 * p.cache_read + 1000 * p.output) / 1e6)
    over = p.cost(above - 999, 1000, 0, 0, 1000)
    assert over == pytest.approx(((above - 999) * inp + 1000 * read + 1000 * out) / 1e6)


def test_haiku_5_5_prompt_counts_cache_reads_and_writes_toward_the_100k_line() -> None:
    p = prices("claude-haiku-5-5")
    # 40k uncached + 40k read + 21k written (1h) = 101k > 100k: the long tier on every token
    expected = (40_000 * 0.50 + 40_000 * 0.05 + 21_000 * 1.00) / 1e6
    assert p.cost(40_000, 40_000, 0, 21_000, 0) == pytest.approx(expected)


def test_rows_without_a_tier_bill_flat() -> None:
    for key in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-2", "gemini-4-argon"):
        assert prices(key).long_context is None, key
    # no long-context rate on their pages (OAI(gpt-5.5-pro) names none; 400K-context models)
    for key in ("gpt-5.5-pro", "gpt-5.2", "gpt-5.3-codex", "gpt-5.1-codex-max", "claude-3-5-sonnet"):
        assert prices(key).long_context is None, key


def test_older_rows_are_served_by_their_providers_caches() -> None:
    # OpenAI before GPT-5.6: automatic caching (providers.md §2.1); Claude 3.x: breakpoints;
    # Gemini 2.0 Flash: explicit caching only (implicit caching is 2.5 and newer, providers.md §3)
    for key in ("gpt-5.1-codex-max", "gpt-5.3-codex", "gpt-5.5", "o1", "codex-mini-latest"):
        assert default_profile(key) == "openai-auto", key
    assert default_profile("claude-3-5-sonnet-20241022") == "anthropic"
    assert default_profile("claude-3-opus-latest") == "anthropic"
    assert default_profile("gemini-2.0-flash") == "gemini-explicit"
    assert model_info("gpt-5.1-codex-mini").image_rule == "openai-tile"  # gpt-5.1's tile rule
    assert model_info("gpt-5.4-mini").image_rule == "openai-patch"  # providers.md §2.6 x1.2
    assert model_info("claude-3-5-sonnet").image_rule == "anthropic"


def test_gpt_5_1_codex_max_is_its_own_row_not_gpt_5_1() -> None:
    # gpt-5.1-codex is its own row (issue 33), priced as gpt-5.1; -max and -mini too (mini bills a fifth)
    assert canonical("gpt-5.1-codex") == "gpt-5.1-codex"
    codex, base = prices("gpt-5.1-codex"), prices("gpt-5.1")
    assert (codex.input, codex.cache_read, codex.output) == (base.input, base.cache_read, base.output)
    assert canonical("aide-gpt-5") == "gpt-5"  # Codex in VS Code
    assert canonical("gpt-5.1-codex-max") != "gpt-5.1"
    assert prices("gpt-5.1-codex-mini").input == prices("gpt-5.1").input / 5


def test_fast_mode_rows() -> None:
    # Opus 5: A-PRICE fast table $10/$50; Opus 5.5 $8/$40 and Fable 5.2 $16/$80 (3P), cache x multipliers
    assert (prices("claude-opus-5-fast").input, prices("claude-opus-5-fast").output) == (10.00, 50.00)
    assert five(prices("claude-opus-5-5-fast")) == (8.00, 10.00, 16.00, 0.40, 40.00)
    assert five(prices("claude-fable-5-2-fast")) == (16.00, 20.00, 32.00, 0.40, 80.00)
    # the official fast-mode page: not on Sonnet or Haiku
    for name in ("claude-sonnet-5-5-fast", "claude-haiku-5-5-fast"):
        with pytest.raises(CatalogError, match="no fast-mode prices"):
            prices(name)


@pytest.mark.parametrize(
    ("unknown", "near"),
    [
        ("gpt-6.3-sol", "gpt-6.2-sol"),
        ("claude-opus-5-6", "claude-opus-5-5"),
        ("claude-fable-5-3", "claude-fable-5-2"),
        ("gemini-4-neon", "gemini-4-argon"),
        ("deepseek-v5-pro", "deepseek-v4-pro"),
    ],
)
def test_an_unknown_id_still_errors_naming_close_ids(unknown: str, near: str) -> None:
    with pytest.raises(CatalogError) as err:
        prices(unknown)
    msg = str(err.value)
    assert repr(unknown) in msg and "closest known" in msg and near in msg


@pytest.mark.parametrize(
    ("given", "name"),
    [("gpt-5.2", "gpt-5.2"), ("gpt-5.2-codex", "gpt-5.2-codex"), ("gpt-5.2-2025-12-11", "gpt-5.2"),
     ("openai/gpt-5.2-codex", "gpt-5.2-codex"), ("gpt-5.3-codex", "gpt-5.3-codex")],
)  # fmt: skip
def test_codex_cli_ids_of_2025_12_to_2026_are_priced(given: str, name: str) -> None:
    """Codex CLI logs carry gpt-5.2(-codex) and gpt-5.3-codex, one price on their pages and on GitHub
    docs' model price table ($1.75 input, $0.175 cached, $14 output per MTok; prices.yaml cites
    them), OpenAI's automatic cache."""
    assert canonical(given) == name
    assert five(prices(name)) == (1.75, 1.75, 1.75, 0.175, 14.00)
    assert model_info(name).provider == "openai" and default_profile(name) == "openai-auto"
