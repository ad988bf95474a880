"""Every method a harness model overrides is a hook listed in sim/harness/hooks.py, and every hook
listed is a method of the conversation process."""

from __future__ import annotations

from ctxbench.sim.harness.calls import ProviderCalls
from ctxbench.sim.harness.coding import CodingConversation
from ctxbench.sim.harness.conversation import Conversation
from ctxbench.sim.harness.hooks import HOOKS, ConversationHooks
from ctxbench.sim.harness.recorded import RecordedConversation
from ctxbench.sim.harness.summary_calls import SummaryCalls


def _own(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if callable(v) and not n.startswith("__")}


def test_the_hooks_listed_are_the_protocols_and_the_conversations() -> None:
    assert set(HOOKS) == _own(ConversationHooks)
    for name in HOOKS:
        assert callable(getattr(Conversation, name)), name
        assert f"`{name}(" in (ConversationHooks.__doc__ or ""), name


def test_a_harness_model_overrides_only_hooks() -> None:
    base = _own(Conversation) | _own(ProviderCalls)
    for model in (CodingConversation, RecordedConversation, SummaryCalls):
        overridden = _own(model) & base
        assert overridden <= set(HOOKS), (model.__name__, sorted(overridden - set(HOOKS)))
