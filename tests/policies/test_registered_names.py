"""Harnesses, generators and importers live in the one registry; a preset naming an unknown
harness or provider is an error with the closest valid names, never a run of another harness."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from ctxbench.policies.preset import PresetError, policy_from_dict
from ctxbench.sim.core.registry import home_module, lookup, names
from ctxbench.sim.harness.coding import CodingConversation
from ctxbench.sim.harness.conversation import Conversation
from ctxbench.sim.harness.recorded import RecordedConversation
from ctxbench.traces.generators import GENERATORS, PARAMS
from ctxbench.traces.importers import FORMATS, IMPORTERS

BASE = {"name": "t", "estimator": "anchored", "eviction": "keep-all", "compaction": "none", "marks": "none"}


def test_harnesses_are_registered() -> None:
    assert names("harness") == ["C", "H", "recorded"]
    assert lookup("harness", "H") is Conversation
    assert lookup("harness", "C") is CodingConversation
    assert lookup("harness", "recorded") is RecordedConversation


@pytest.mark.parametrize(
    ("key", "value", "hint"),
    [("harness", "c", "did you mean 'C'?"), ("provider", "anthropc", "did you mean 'anthropic'?")],
)
def test_a_typo_is_an_error_with_the_closest_name(key: str, value: str, hint: str) -> None:
    with pytest.raises(PresetError, match=hint):
        policy_from_dict({**BASE, key: value}, "p.yaml")


def test_generators_and_importers_are_views_of_the_registry() -> None:
    assert sorted(GENERATORS) == names("generator") == sorted(PARAMS)
    assert PARAMS["game"] is lookup("generator", "game").params
    assert list(IMPORTERS) == names("importer") == list(FORMATS)
    assert IMPORTERS["codex"] is lookup("importer", "codex")
    assert "nope" not in GENERATORS and "nope" not in IMPORTERS


@pytest.mark.parametrize("kind", ["estimator", "eviction", "compaction", "marks", "harness", "importer"])
def test_the_lookup_table_names_the_module_that_registers_each_component(kind: str) -> None:
    """`registry._HOME` lets a lookup import one module: it must list every component of its
    kinds, each with the module that registers it (a wrong or missing row costs time, not
    correctness, but should not stay)."""
    registered = {name: lookup(kind, name).__module__ for name in names(kind)}
    assert {name: home_module(kind, name) for name in registered} == registered


def test_a_run_imports_only_the_components_its_preset_names() -> None:
    code = (
        "import sys; from ctxbench.policies.preset import load_policy; from ctxbench.sim.core.registry "
        "import lookup; load_policy('h-direct'); lookup('harness', 'H'); "
        "print(sorted(m for m in sys.modules if m.startswith(('ctxbench.policies', "
        "'ctxbench.sim.harness.conversation'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(ast.literal_eval(out))
    assert {"ctxbench.policies.estimators", "ctxbench.policies.eviction", "ctxbench.policies.marks"} <= loaded
    late = {"ctxbench.policies.tiers", "ctxbench.policies.masking", "ctxbench.sim.harness.coding"}
    assert not loaded & late


def test_billed_start_up_imports_no_importer_nor_heavy_library() -> None:
    """`ctxbench billed` reads Claude Code logs through their usage lines (bench/billed/fast.py): its
    start-up imports no importer module, no trace model, and none of numpy, simpy, yaml, matplotlib
    (issue 28: start-up was most of its time)."""
    code = (
        "import sys; from ctxbench.bench.cli import build_parser; build_parser('billed'); "
        "import ctxbench.bench.billed.fast, ctxbench.bench.fidelity.discover; print(sorted(sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(ast.literal_eval(out))
    heavy = {"numpy", "simpy", "yaml", "matplotlib", "ctxbench.traces.model", "ctxbench.traces.codec"}
    importers = {f"ctxbench.traces.importers.{m}" for m in ("claude_code", "codex", "opencode", "gemini_cli")}
    assert not loaded & (heavy | importers)
