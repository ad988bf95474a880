"""Billed totals equal ccusage's for every shared Claude Code session (traces-real FORMATS.md
"Pitfalls": ccusage's per-session view is the reference to match to the token).

Figures: ccusage 20.0.24 (npm), `CLAUDE_CONFIG_DIR=<tmp> ccusage claude session --json --offline
-z UTC`, run on 2026-12-01 over copies of the shared sessions laid out as
`<tmp>/projects/<project>/<session>.jsonl` (sub-agents under `<session>/subagents/`, each cua
session in a project of its own). `--mode calculate` gives the same costs.
"""

from __future__ import annotations

import json

import pytest

from ctxbench.bench.billed.totals import session_totals
from tests.real import REAL, needs_real

pytestmark = needs_real

# session file: (inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens, totalCost)
CCUSAGE = {
    "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl": (183, 38905, 351961, 14938375, 11.96233749999999),
    "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl": (2484, 40326, 263265, 15907654, 11.607047000000003),
    "claude-code-log/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": (
        1792,
        37299,
        301852,
        1774691,
        4.09856425,
    ),
    "claude-code-log/-Users-dain-workspace-claude-code-log-sample/"
    "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl": (
        332,
        2573,
        169949,
        7243488,
        2.849946149999999,
    ),
    "claude-code-log/-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl": (
        419,
        3195,
        330302,
        4775345,
        2.7204179999999996,
    ),
    "claude-code-log/-Users-dain-workspace-coderabbit-review-helper/"
    "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl": (
        735,
        23714,
        152097,
        3483153,
        1.9732246499999995,
    ),
    "claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": (
        818,
        51933,
        137976,
        3647854,
        2.3932151999999998,
    ),
    "sniffly/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl": (114, 16769, 174552, 3754072, 2.032668599999999),
    "cua-sandbox-apps/pgadmin/session.jsonl": (653, 40086, 327901, 7038391, 1.31479835),
    "cua-sandbox-apps/pycharm/session.jsonl": (535, 36264, 191702, 4699396, 0.8914221),
}


@pytest.mark.parametrize("rel", sorted(CCUSAGE))
def test_billed_totals_equal_ccusage_session_totals(rel: str) -> None:
    inp, out, write, read, cost = CCUSAGE[rel]
    t = session_totals(REAL / rel)
    assert (t.input, t.output, t.cache_write, t.cache_read) == (inp, out, write, read)
    assert t.cost == pytest.approx(cost, rel=1e-9, abs=1e-9)


def test_ctxbench_billed_prints_ccusage_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """`ctxbench billed LOG... --json`: the same totals under ccusage's field names, per session."""
    from ctxbench.bench.cli import main

    rels = sorted(CCUSAGE)
    assert main(["billed", *(str(REAL / r) for r in rels), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [d["session"] for d in docs] == [str(REAL / r) for r in rels]
    for rel, d in zip(rels, docs, strict=True):
        inp, out, write, read, cost = CCUSAGE[rel]
        got = (d["inputTokens"], d["outputTokens"], d["cacheCreationTokens"], d["cacheReadTokens"])
        assert got == (inp, out, write, read)
        assert d["totalCost"] == pytest.approx(cost, abs=1e-6)


def test_ctxbench_billed_takes_the_cost_a_log_records(capsys: pytest.CaptureFixture[str]) -> None:
    """Cline records each request's cost (its `metrics.cost`): by default (`--mode auto`, ccusage's
    default) that is the cost, for the conversation on a model the catalog does not know too."""
    from ctxbench.bench.cli import main

    assert main(["billed", str(REAL / "cline-sdk"), "--json"]) == 0
    docs = {d["session"].rsplit("/", 1)[1]: d for d in json.loads(capsys.readouterr().out)}
    logged = 0.0
    for name in ("session.messages.json", "agentic.compaction.json"):
        raw = json.loads((REAL / "cline-sdk" / name).read_text(encoding="utf-8"))
        costs = [(m.get("metrics") or {}).get("cost") for m in _messages(raw)]
        logged += sum(float(c) for c in costs if c)
    got = docs["session.messages.json"]["totalCost"] + docs["agentic.compaction.json"]["totalCost"]
    assert got == pytest.approx(logged, abs=1e-6)


def _messages(raw: object) -> list[dict[str, object]]:
    """Every object with a `metrics` field in a Cline file, at any depth."""
    out: list[dict[str, object]] = []
    if isinstance(raw, dict):
        if "metrics" in raw:
            out.append(raw)
        for v in raw.values():
            out += _messages(v)
    elif isinstance(raw, list):
        for v in raw:
            out += _messages(v)
    return out


def test_ctxbench_billed_leaves_an_unknown_models_cost_out(capsys: pytest.CaptureFixture[str]) -> None:
    """A folder with a conversation on a model without prices, priced from the catalog (`--mode
    calculate`): every session's tokens are printed, that one's cost is null (never a substitute's,
    H-20), the error names the options, exit 2; `--model` prices it as a known model."""
    from ctxbench.bench.cli import main

    assert main(["billed", str(REAL / "cline-sdk"), "--json", "--mode", "calculate"]) == 2
    captured = capsys.readouterr()
    docs = {d["session"].rsplit("/", 1)[1]: d for d in json.loads(captured.out)}
    assert docs["session.messages.json"]["totalCost"] is None
    assert (
        docs["session.messages.json"]["requests"] == 16
        and docs["session.messages.json"]["cacheReadTokens"] == 534435
    )
    assert (
        "unknown model 'mistralai/voxtral-small-24b-2507'" in captured.err and "--prices FILE" in captured.err
    )
    assert (
        main(["billed", str(REAL / "cline-sdk/session.messages.json"), "--model", "claude-opus-4-8-fast"])
        == 0
    )
    assert "priced as claude-opus-4-8-fast (--model)" in capsys.readouterr().err
