"""Claude Code logs on Z.ai's GLM models (its Anthropic-compatible endpoint, api.z.ai/api/anthropic):
the catalog prices the GLM ids these logs name; such a log replays on the zai profile with its
assumption recorded and printed; a conversation that mixes a Claude model with a GLM one is scored
(and, when one of its models is unknown, says which); a request whose usage records 0 tokens is
named, not matched at 0. Synthetic logs written here (tiny, in the shape of Claude Code 2.1.44 on
Z.ai: `msg_<date>` ids, no `requestId`, `cache_read_input_tokens` without writes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.discover import Log
from ctxbench.bench.fidelity.logs import replay_log
from ctxbench.bench.fidelity.parts import OTHER_BACKENDS, families
from ctxbench.bench.fidelity.text import session_text
from ctxbench.sim.core.catalog import default_profile, model_info, prices
from ctxbench.sim.providers.choice import choose
from ctxbench.traces.importers import import_paths
from tests.traces.importers.claude_code_lines import turn, write_log


@pytest.mark.parametrize(
    ("model", "window", "rates"),
    [
        ("glm-4.7", 200_000, (0.6, 0.11, 2.2)),  # docs.z.ai/guides/overview/pricing
        ("glm-5", 200_000, (1.0, 0.2, 3.2)),
        ("glm-4.5-air", 128_000, (0.2, 0.03, 1.1)),
        ("glm-4.7-flash", 200_000, (0.0, 0.0, 0.0)),  # "Free"
        ("glm-5.1", 200_000, (1.4, 0.26, 4.4)),  # the same page, as ccusage 72e2372 carries it
        ("glm-4.6", 200_000, (0.6, 0.11, 2.2)),
        ("glm-4.5", 128_000, (0.6, 0.11, 2.2)),
    ],
)
def test_catalog_prices_the_glm_models_of_claude_code_logs(model: str, window: int, rates: tuple) -> None:
    info, pr = model_info(model), prices(model)
    assert info.provider == "zai" and info.window == window and default_profile(model) == "zai"
    assert (pr.input, pr.cache_read, pr.output) == rates
    assert pr.cache_write_5m == pr.input  # storage free: a write is plain input
    assert "docs.z.ai/guides/overview/pricing" in pr.source


def _line(k: int, model: str, usage: dict[str, Any], rid: str | None = None) -> list[dict[str, Any]]:
    t = f"2026-02-19T02:{k:02d}:00Z"
    mid = f"msg_2026021910{k:06d}" if rid is None else f"msg_01{k:022d}"
    return turn(k, model, usage, asked=t, answered=t.replace(":00Z", ":05Z"), message_id=mid, request_id=rid)


def _glm_log(tmp_path: Path, models: list[str], zero_at: int = -1) -> Path:
    """One conversation: request k on models[k]; Z.ai's requests read the previous prompt (in
    128-token steps, no write), Anthropic's (with a request id) write and read; request `zero_at`
    logs only the stream's first usage line (0 in, 0 out)."""
    lines: list[dict[str, Any]] = []
    prev = 0
    for k, model in enumerate(models):
        prompt = prev + (12_000 if k == 0 else 700)
        if k == zero_at:
            usage: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0}
        elif model.startswith("glm"):
            read = prev // 128 * 128
            usage = {"input_tokens": prompt - read, "cache_read_input_tokens": read, "output_tokens": 40}
        else:
            usage = {
                "input_tokens": 3,
                "cache_read_input_tokens": prev,
                "cache_creation_input_tokens": prompt - prev - 3,
                "output_tokens": 40,
            }
        rid = None if model.startswith("glm") else f"req_011C{k:020d}"
        lines += _line(k, model, usage, rid)
        prev = prompt + 40
    return write_log(tmp_path / "glm.jsonl", lines)


def test_glm_log_replays_on_zai_with_its_assumption_stated(tmp_path: Path) -> None:
    res = import_paths([_glm_log(tmp_path, ["glm-4.7"] * 5)], "claude-code")
    (trace,) = res.traces
    meta = trace.header.meta
    assert meta["backend"] == "zai" and "profile zai" in meta["backend_assumption"]
    assert meta["usage_counts"] == "whole prompt"  # no writes reported: sized on whole prompts
    assert any("zai's Anthropic-compatible endpoint" in n for n in res.report.notes)
    sv = choose(trace, "anthropic")
    assert (sv.profile, sv.model) == ("zai", "glm-4.7")
    sf = compare(trace, "main")
    assert sf.n == 5 and sf.model == "glm-4.7"
    assert sf.cost_billed > 0
    text = "\n".join(session_text("glm.jsonl", sf))
    assert "assumed: Claude Code on zai's Anthropic-compatible endpoint" in text
    assert families("claude-code", sf.models) == [OTHER_BACKENDS, f"{OTHER_BACKENDS}: zai"]


def test_claude_log_on_anthropic_states_no_backend(tmp_path: Path) -> None:
    (trace,) = import_paths([_glm_log(tmp_path, ["claude-opus-4-6"] * 3)], "claude-code").traces
    assert "backend" not in trace.header.meta
    assert families("claude-code", ["claude-opus-4-6"]) == ["claude-code"]


def test_mixed_claude_and_glm_conversation_is_scored(tmp_path: Path) -> None:
    log = _glm_log(tmp_path, ["claude-opus-4-6", "claude-opus-4-6", "glm-4.7", "glm-4.7", "claude-opus-4-6"])
    (r,) = replay_log(Log("glm.jsonl", log, "claude-code"))
    assert r.compared, r.why_not
    assert r.fidelity is not None and r.fidelity.models == ["claude-opus-4-6", "glm-4.7"]
    assert r.fidelity.n == 5
    assert "several backends (anthropic, zai)" in r.trace.header.meta["backend_assumption"]
    assert families("claude-code", r.fidelity.models) == ["claude-code on several backends"]


def test_unknown_switched_to_model_is_named(tmp_path: Path) -> None:
    log = _glm_log(tmp_path, ["claude-opus-4-6", "claude-opus-4-6", "glm-9.9-imaginary"])
    (r,) = replay_log(Log("glm.jsonl", log, "claude-code"))
    assert not r.compared
    assert r.why_not.startswith("model glm-9.9-imaginary (switched to) not in sim/data/models.yaml")


def test_request_logged_with_zero_tokens_is_named_not_scored(tmp_path: Path) -> None:
    res = import_paths([_glm_log(tmp_path, ["glm-4.7"] * 4, zero_at=2)], "claude-code")
    (trace,) = res.traces
    assert trace.header.meta["usage_unrecorded"] == "1"
    sf = compare(trace, "main")
    assert sf.n == 3  # the request without a known bill is sent, not scored
    all_zero = _glm_log(tmp_path, ["glm-4.7"], zero_at=0)
    (r,) = replay_log(Log("glm.jsonl", all_zero, "claude-code"))
    assert not r.compared and "1 billed request(s) record 0 tokens in and out" in r.why_not


def test_glm_5_1_log_replays_on_zai(tmp_path: Path) -> None:
    """Claude Code 2.1.88 on Z.ai's glm-5.1 (ahmedarafa994/eq-prediction in bench/corpus/sessions.csv)."""
    (r,) = replay_log(Log("glm.jsonl", _glm_log(tmp_path, ["glm-5.1"] * 4), "claude-code"))
    assert r.compared, r.why_not
    assert r.fidelity is not None and r.fidelity.n == 4 and r.fidelity.models == ["glm-5.1"]
    assert choose(r.trace, "anthropic").profile == "zai"
    assert r.fidelity.cost_billed > 0


def test_kimi_under_openrouter_ids_replays_on_moonshot(tmp_path: Path) -> None:
    """Kimi K2.6 named by OpenRouter's ids (harinathpathipaka-commits/visionweb): the id and its dated
    canonical slug resolve (catalog.py rules 3 and 7) and replay on Moonshot's automatic cache."""
    pr = prices("moonshotai/kimi-k2.6-20260420")
    assert (pr.model, pr.input, pr.cache_read, pr.output) == ("kimi-k2.6", 0.95, 0.16, 4.0)
    assert model_info("moonshotai/kimi-k2.6").window == 262_144
    assert default_profile("moonshotai/kimi-k2.6") == "moonshot"
    log = _glm_log(tmp_path, ["moonshotai/kimi-k2.6-20260420"] * 2 + ["moonshotai/kimi-k2.6"] * 2)
    (r,) = replay_log(Log("kimi.jsonl", log, "claude-code"))
    assert r.compared, r.why_not
    assert r.fidelity is not None and r.fidelity.n == 4 and r.fidelity.model == "kimi-k2.6"
    assert r.trace.header.meta["backend"] == "moonshot"
    assert "router that names models as OpenRouter does" in r.trace.header.meta["backend_assumption"]


@pytest.mark.parametrize(
    ("model", "near"),
    [("claude-opus-4-6-thinking", "closest known: claude-opus-4-6"), ("BBHH666", "no known id near it")],
)
def test_unmapped_ids_are_named_with_the_closest_known_and_the_override(
    tmp_path: Path, model: str, near: str
) -> None:
    """No public source maps these (a relay's own names): not guessed; the note says what to do."""
    (r,) = replay_log(Log("x.jsonl", _glm_log(tmp_path, ["claude-opus-4-6", model]), "claude-code"))
    assert not r.compared
    assert r.why_not.startswith(f"model {model} (switched to) not in sim/data/models.yaml")
    assert near in r.why_not and "--model NAME" in r.why_not and "--prices FILE" in r.why_not
