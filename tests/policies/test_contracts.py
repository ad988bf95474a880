"""Every registered component meets its kind's contract (policies/contracts.py), so the engine
calls methods instead of probing attributes; compaction rules and requests say what applies."""

from __future__ import annotations

import inspect

import pytest

from ctxbench.policies.contracts import (
    Compaction,
    CompactionRules,
    Estimator,
    Eviction,
    Marks,
    SummaryRequest,
)
from ctxbench.policies.preset import load_policy, preset_names
from ctxbench.sim.core.registry import create, names

CONTRACTS = {"estimator": Estimator, "eviction": Eviction, "compaction": Compaction, "marks": Marks}


@pytest.mark.parametrize("kind", sorted(CONTRACTS))
def test_every_registered_component_has_its_contracts_methods(kind: str) -> None:
    methods = [n for n, v in inspect.getmembers(CONTRACTS[kind]) if inspect.isfunction(v) and n[0] != "_"]
    for name in names(kind):
        component = create(kind, name)
        missing = [m for m in methods if not callable(getattr(component, m, None))]
        assert not missing, f"{kind} {name!r} lacks {missing}"


def test_rules_and_requests_state_the_components_own_numbers() -> None:
    tiers = load_policy("c-default").compaction
    assert tiers.rules() == CompactionRules("default", 0.8, 0.9, True, True, 0.02, 0.05, True, True)
    gemini = load_policy("gemini-cli").compaction.summary_request()
    assert gemini.calls == 2 and gemini.ack_bytes > 0  # summary + verification probe, acknowledgement
    assert create("compaction", "none").rules() == CompactionRules()
    assert create("compaction", "recorded").summary_request() == SummaryRequest()
    handoff = load_policy("h-direct").compaction
    assert handoff.rules().trigger == 0.65  # H-14


def test_every_preset_builds_with_typed_components() -> None:
    for name in preset_names():
        pol = load_policy(name)
        assert isinstance(pol.compaction.rules(), CompactionRules)
