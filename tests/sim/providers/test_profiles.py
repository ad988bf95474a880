"""Every profile builds, prices, errors and reports usage in its provider's own words; DeepSeek
units; Gemini explicit storage; faults scripted by index and time; the CLI on every profile."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.sim.core.profiles import ProfileError, default_model, profile, profile_names
from ctxbench.sim.core.provider import Faults, Provider
from ctxbench.sim.providers.deepseek import DeepSeekConfig, DeepSeekProvider
from ctxbench.sim.providers.gemini import GeminiExplicitProvider
from ctxbench.sim.providers.registry import make_provider
from tests.sim.providers.conftest import EPS_LATENCY, catalog, request, say, transcript

TOO_LONG = {
    "openai-auto": (400, "This model's maximum context length is"),
    "openai-breakpoints": (400, "Your input exceeds the context window of this model."),
    "gemini-implicit": (400, "The input token count ("),
    "gemini-explicit": (400, "The input token count ("),
    "deepseek": (400, "This model's maximum context length is"),
    "openrouter": (400, "This endpoint's maximum context length is"),
    "meta-replicas": (400, "This model's maximum context length is"),
    "anthropic": (400, "prompt is too long:"),
}


@pytest.mark.parametrize("name", sorted(TOO_LONG))
def test_too_long_real_text(name: str) -> None:
    model = default_model(name)
    assert model
    p = make_provider(name, model, 0)
    tr = transcript(tools=10, system=p.model.window + 1)
    out = p.call(request(tr, 0), 0.0)
    assert out.error is not None and out.error.kind == "too_long" and not out.error.transient
    assert (out.error.status, out.error.message[: len(TOO_LONG[name][1])]) == TOO_LONG[name]
    assert out.cost == 0.0


def test_every_profile_has_sources_and_builds() -> None:
    for name in profile_names():
        prof = profile(name)
        if name != "anthropic" or "sources" in prof:
            assert prof.get("sources"), name
        make_provider(name, default_model(name) or "claude-sonnet-4-6", 0)


def test_unknown_key_lists_valid_ones() -> None:
    with pytest.raises(ProfileError, match=r"valid keys: .*granularity"):
        make_provider("openai-auto", "gpt-4.1", 0, bogus=1)


@pytest.mark.parametrize(
    "name,fields",
    [
        ("openai-auto", {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"}),
        ("openai-breakpoints", {"input_tokens", "input_tokens_details", "output_tokens", "total_tokens"}),
        ("gemini-implicit", {"promptTokenCount", "candidatesTokenCount", "totalTokenCount"}),
        ("deepseek", {"prompt_cache_hit_tokens", "prompt_cache_miss_tokens", "prompt_tokens"}),
    ],
)
def test_wire_usage_fields(name: str, fields: set[str]) -> None:
    p = make_provider(name, default_model(name) or "", 0)
    tr = transcript()
    say(tr, "user", "u", 3000)
    out = p.call(request(tr, 0, breakpoints=((len(tr) - 1, "5m"),)), 0.0)
    assert fields <= set(out.wire)
    if name == "deepseek":
        assert (
            out.wire["prompt_cache_hit_tokens"] + out.wire["prompt_cache_miss_tokens"]
            == out.wire["prompt_tokens"]
        )


def test_faults_by_index_and_time_and_stream_cut_is_billed() -> None:
    f = Faults(scripted={1: "rate_limit"}, windows=((100.0, 200.0, "overloaded"),), retry_after=7.0)
    p = make_provider("openai-auto", "gpt-4.1", 0, faults=f)
    tr = transcript()
    say(tr, "user", "u", 500)
    assert p.call(request(tr, 0), 0.0).error is None
    e1 = p.call(request(tr, 1), 1.0).error
    assert e1 is not None and (e1.status, e1.code, e1.retry_after) == (429, "rate_limit_exceeded", 7.0)
    e2 = p.call(request(tr, 2), 150.0).error
    assert e2 is not None and (e2.status, e2.code) == (503, "server_is_overloaded")
    cut = make_provider("gemini-implicit", "gemini-2.5-pro", 0, faults={"scripted": {0: "stream_error"}})
    out = cut.call(request(tr, 0), 0.0)
    assert out.error is not None and out.error.billed and out.usage.output == 0 and out.cost > 0  # H-20


def test_deepseek_units() -> None:
    """A+B then A+C misses; A is then a unit; A+D hits A (DS-KV rule 2); A+B → A+B+C hits A+B."""
    m, pr = catalog("deepseek-chat")
    p = DeepSeekProvider(
        "deepseek", m, pr, DeepSeekConfig(ready_delay=0.0, unit_tokens=1, latency=EPS_LATENCY), 0
    )

    def conv(tail: str):
        tr = transcript(tools=100, system=900, key="A")
        say(tr, "user", tail, 500)
        return tr

    assert p.call(request(conv("B"), 0, conv="1"), 0.0).usage.cache_read == 0
    assert p.call(request(conv("C"), 1, conv="2"), 10.0).usage.cache_read == 0  # A is not a unit yet
    assert p.call(request(conv("D"), 2, conv="3"), 20.0).usage.cache_read == 1000  # A is now
    tr = conv("B")
    say(tr, "assistant", "rB", 300)
    say(tr, "user", "C2", 100)
    assert p.call(request(tr, 3, conv="1"), 30.0).usage.cache_read == 1800  # end of B's output


def test_gemini_explicit_bills_storage() -> None:
    p = make_provider("gemini-explicit", "gemini-2.5-pro", 0)
    tr = transcript()
    say(tr, "user", "u", 10_000)
    bp = ((len(tr) - 1, "5m"),)
    first = p.call(request(tr, 0, breakpoints=bp), 0.0)
    say(tr, "user", "v", 100)
    second = p.call(request(tr, 1, breakpoints=((len(tr) - 2, "5m"),)), 1800.0)
    assert second.usage.cache_read == 12_500
    storage = 12_500 * 4.50 * 0.5 / 1e6
    assert second.cost == pytest.approx(
        storage + (100 * 1.25 + 12_500 * 0.125 + second.usage.output * 10) / 1e6
    )
    assert (
        first.wire.get("cachedContentTokenCount") is None and second.wire["cachedContentTokenCount"] == 12_500
    )


def _storage_after_half_an_hour(p: Provider) -> tuple[float, int]:
    """Storage billed for a resource held 30 minutes, and the resource's size."""
    tr = transcript()
    say(tr, "user", "u", 10_000)
    p.call(request(tr, 0, breakpoints=((len(tr) - 1, "5m"),)), 0.0)
    say(tr, "user", "v", 100)
    held = p.call(request(tr, 1, breakpoints=((len(tr) - 2, "5m"),)), 1800.0).usage.cache_read
    assert isinstance(p, GeminiExplicitProvider) and held > 0
    return p.storage_cost, held


@pytest.mark.parametrize(
    ("model", "rate"),
    [("gemini-2.5-pro", 4.50), ("gemini-2.5-flash", 1.00), ("gemini-2.0-flash", 1.00),
     ("gemini-3.8-flash", 0.50)],
)  # fmt: skip
def test_gemini_explicit_storage_is_the_models_rate(model: str, rate: float) -> None:
    # providers.md §3: storage per 1M tokens·hour by model (2.5 Pro $4.50, Flash $1.00, 3.8 Flash $0.50)
    cost, held = _storage_after_half_an_hour(make_provider("gemini-explicit", model, 0))
    assert cost == pytest.approx(held * rate * 0.5 / 1e6)


def test_gemini_explicit_storage_override_and_missing_rate() -> None:
    cheap = make_provider("gemini-explicit", "gemini-2.5-pro", 0, storage_per_mtok_hour=0.45)
    cost, held = _storage_after_half_an_hour(cheap)
    assert cost == pytest.approx(held * 0.45 * 0.5 / 1e6)
    with pytest.raises(
        ProfileError, match=r"no storage price for model 'gemini-4-argon'.*storage_per_mtok_hour"
    ):
        make_provider("gemini-explicit", "gemini-4-argon", 0)


@pytest.mark.parametrize("name", profile_names())
def test_cli_run_every_profile(name: str) -> None:
    trace = Path("traces/samples/game-short.jsonl")
    if not trace.exists():
        pytest.skip("sample trace missing")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxbench.bench.cli",
            "run",
            str(trace),
            "--policy",
            "h-direct",
            "--provider",
            name,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode in (0, 1), r.stderr[-500:]
    d = json.loads(r.stdout)
    assert d["provider"] == name and d["requests"] > 0 and d["cost"] > 0


def test_cli_providers_lists_sources() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "providers"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0
    for name in profile_names():
        assert name in r.stdout
    assert "providers.md §2.1" in r.stdout
