"""Harnesses, generators and importers live in the one registry; a preset naming an unknown
harness or provider is an error with the closest valid names, never a run of another harness."""

from __future__ import annotations

import pytest

from ctxbench.policies.preset import PresetError, policy_from_dict
from ctxbench.policies.registry import lookup, names
from ctxbench.sim.harness import Conversation, RecordedConversation
from ctxbench.sim.harness_c import CConversation
from ctxbench.traces.generators import GENERATORS, PARAMS
from ctxbench.traces.importers import FORMATS, IMPORTERS

BASE = {"name": "t", "estimator": "anchored", "eviction": "keep-all", "compaction": "none", "marks": "none"}


def test_harnesses_are_registered() -> None:
    assert names("harness") == ["C", "H", "recorded"]
    assert lookup("harness", "H") is Conversation
    assert lookup("harness", "C") is CConversation
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
