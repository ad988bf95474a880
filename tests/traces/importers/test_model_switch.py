"""A session on more than one model: each request is billed, and cached, as the model it ran on.

Checked on a real session: Claude Code 2.1.197 from npm run against `ctxbench serve` (data/
claude-code-2.1.197-model-switch.jsonl.xz, the session log; the server's ledger beside it): four
requests on claude-sonnet-4-5, then `claude -p --resume ID --model claude-haiku-4-5` (one request
that reads nothing: Haiku has no entry of its own), then `--resume ID --model claude-sonnet-4-5` (one
request that reads what Sonnet cached before). The ledger's cost, $0.22709715, is also what ccusage
20.0.24 prints for the log (`CLAUDE_CONFIG_DIR=<tmp> ccusage claude session --json --offline`).
Codex CLI 0.171.0 the same way (data/codex-0.171.0-model-switch.rollout.jsonl.xz): four requests on
gpt-5.1-codex, then `codex exec resume --last -c model="gpt-5.1-codex-mini"`, whose `turn_context`
names the new model (OpenAI's automatic cache is per model too: the resumed request reads nothing).
Before, each session was priced as one model (the first, or Codex's last): 5/6 and 4/5 within,
billed $0.3178 and $0.0089 against the servers' $0.2271 and $0.0276.

Fast mode (`usage.speed: "fast"`, Opus 4.6+) is the model's `-fast` variant, priced at its own
rates, as ccusage prices it (#886): the same log with every request on claude-opus-4-6 and the Haiku
request marked fast costs $1.66305775 in ccusage 20.0.24 (run on the rewritten file, as below)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from ctxbench.bench.billed.totals import billed_totals
from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.fields import session_json
from ctxbench.sim.core.catalog import CatalogError, canonical
from ctxbench.sim.providers.choice import choose
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent, ModelSwitchEvent, Trace
from tests.traces.importers.ledgers import billed_rows

DATA = Path(__file__).parent / "data"
LOG = DATA / "claude-code-2.1.197-model-switch.jsonl.xz"
LEDGER = DATA / "claude-code-2.1.197-model-switch.requests.jsonl.xz"
CODEX = DATA / "codex-0.171.0-model-switch.rollout.jsonl.xz"
CODEX_LEDGER = DATA / "codex-0.171.0-model-switch.requests.jsonl.xz"
CCUSAGE_COST = 0.22709715
CCUSAGE_COST_FAST = 1.66305775


def _lines() -> list[dict[str, object]]:
    with lzma.open(LOG, "rt", encoding="utf-8") as f:
        return [json.loads(x) for x in f if x.strip()]


def _rewritten(tmp_path: Path, models: dict[str, tuple[str, str]]) -> Path:
    """The log with each reply's model (and `usage.speed`) replaced as `models` says."""
    out = tmp_path / LOG.name.removesuffix(".xz")
    with out.open("w", encoding="utf-8") as f:
        for o in _lines():
            msg = o.get("message")
            if isinstance(msg, dict) and msg.get("model") in models:
                msg["model"], msg["usage"]["speed"] = models[msg["model"]]
            f.write(json.dumps(o, separators=(",", ":")) + "\n")
    return out


def _models_per_request(tr: Trace) -> list[str]:
    current, out = tr.header.model, []
    for ev in tr.events:
        if isinstance(ev, ModelSwitchEvent):
            current = ev.model
        elif isinstance(ev, MessageEvent) and ev.usage is not None:
            out.append(current)
    return out


# The Codex ledger was recorded when the catalog resolved gpt-5.1-codex to gpt-5.1 (same prices); it
# is a row of its own since issue 33, so the ledger's name for it is read as the model it served.
RECORDED_AS = {"gpt-5.1": "gpt-5.1-codex"}


def _ledger(path: Path) -> tuple[list[str], float]:
    billed = billed_rows(path)
    models = [canonical(str(r["model"])) for r in billed]
    if path == CODEX_LEDGER:
        models = [RECORDED_AS.get(m, m) for m in models]
    return models, sum(float(r["cost"]) for r in billed)


SESSIONS = {  # log: (its server's ledger, the models of its requests in order)
    LOG: (LEDGER, ["claude-sonnet-4-5"] * 4 + ["claude-haiku-4-5", "claude-sonnet-4-5"]),
    CODEX: (CODEX_LEDGER, ["gpt-5.1-codex"] * 4 + ["gpt-5.1-codex-mini"]),
}


@pytest.mark.parametrize("log", list(SESSIONS), ids=lambda p: p.name.split("-model")[0])
def test_each_request_runs_and_is_priced_on_the_model_it_ran_on(log: Path) -> None:
    ledger, expected = SESSIONS[log]
    tr = import_paths([log]).traces[0]
    models, cost = _ledger(ledger)
    assert _models_per_request(tr) == models == expected
    assert billed_totals([tr]).cost == pytest.approx(cost, abs=1e-8)
    sf = compare(tr)
    assert [r.within for r in sf.requests] == [True] * len(expected)
    assert sf.cost_billed == pytest.approx(cost, abs=1e-8)
    assert sf.cost_predicted == pytest.approx(cost, abs=1e-8)
    assert [r.model for r in sf.requests] == expected
    assert session_json(sf)["models"] == list(dict.fromkeys(expected))  # `fidelity --json`
    switched = sf.requests[4]  # the first request on the other model
    assert switched.billed.cache_read == switched.predicted.cache_read == 0  # a cache of its own


def test_a_switch_back_reads_what_the_first_model_cached() -> None:
    sf = compare(import_paths([LOG]).traces[0])
    assert sf.requests[5].billed.cache_read == sf.requests[5].predicted.cache_read == 36_205
    assert sf.cost_billed == pytest.approx(CCUSAGE_COST, abs=1e-8)


def test_a_fast_mode_request_is_priced_and_cached_as_the_fast_variant(tmp_path: Path) -> None:
    log = _rewritten(
        tmp_path,
        {
            "claude-sonnet-4-5": ("claude-opus-4-6", "standard"),
            "claude-haiku-4-5": ("claude-opus-4-6", "fast"),
        },
    )
    tr = import_paths([log]).traces[0]
    assert _models_per_request(tr)[3:] == ["claude-opus-4-6", "claude-opus-4-6-fast", "claude-opus-4-6"]
    assert billed_totals([tr]).cost == pytest.approx(CCUSAGE_COST_FAST, abs=1e-8)
    sf = compare(tr)
    assert all(r.within for r in sf.requests)
    assert sf.cost_predicted == pytest.approx(CCUSAGE_COST_FAST, abs=1e-8)


def test_a_switch_to_an_unknown_model_stops_before_the_first_request(tmp_path: Path) -> None:
    log = _rewritten(tmp_path, {"claude-haiku-4-5": ("claude-haiku-9-9", "standard")})
    tr = import_paths([log]).traces[0]
    with pytest.raises(CatalogError, match=r"claude-haiku-9-9.*closest known"):
        choose(tr, "anthropic")
    totals = billed_totals([tr])  # the other requests are priced; the unknown one is named
    assert totals.requests == 6 and len(totals.unpriced) == 1 and "claude-haiku-9-9" in totals.unpriced[0]


def test_billing_terms_list_prices_do_not_cover_are_counted_in_the_report(tmp_path: Path) -> None:
    """A request on the priority tier or US-only inference is priced at list prices (the catalog
    has no rates for them), and the import report says how many there were."""
    out = tmp_path / "geo.jsonl"
    with out.open("w", encoding="utf-8") as f:
        for o in _lines():
            msg = o.get("message")
            if isinstance(msg, dict) and msg.get("model") == "claude-haiku-4-5":
                msg["usage"].update(service_tier="priority", inference_geo="us")
            f.write(json.dumps(o) + "\n")
    counts = import_paths([out]).report.counts
    assert counts["requests billed on service_tier 'priority' (priced at list prices: no rates for it)"] == 1
    assert counts["requests billed on inference_geo 'us' (priced at list prices: no rates for it)"] == 1
    plain = import_paths([LOG]).report.counts  # standard tier, inference_geo "" / "not_available"
    assert not [k for k in plain if k.startswith("requests billed on")]
