"""What a preset's context budget means, and the one computation of it that every harness uses.

A preset says in `budget_means` what `--budget` stands for (each preset's YAML cites why):

- `working`: a working budget of the harness's own, below the model's real window (H-11: 120,000
  by default, 32,000..200,000, "a setting, not a check of the model's real limit; set it at or
  below what the model supports"). The harness plans against min(budget, window).
- `window`: the model window the harness's thresholds are fractions of (C-1, C-19; Claude Code's
  CLAUDE_CODE_AUTO_COMPACT_WINDOW, Codex's `model_context_window`, research/policies.md §1, §2).
  Without `--budget` it is the current model's window; `--budget N` overrides it, capped at the
  model's real window as Claude Code caps its override (policies.md §1 getEffectiveContextWindowSize).
- `none`: nothing the preset decides depends on a token budget (counts of events, turns or tool
  uses, fixed token triggers, recorded compactions, no compaction at all). `--budget` is refused,
  since a sweep over it would draw a flat line that looks like a result.
"""

from __future__ import annotations

from typing import Protocol

BUDGET_MEANINGS = ("working", "window", "none")


class HasWindow(Protocol):
    """A model profile: its real context window in tokens (sim/core/catalog.py ModelInfo)."""

    @property
    def window(self) -> int: ...


class BudgetPolicy(Protocol):
    """The two fields of a policy that `budget_for` reads (policies/preset.py Policy)."""

    @property
    def budget(self) -> int: ...

    @property
    def budget_means(self) -> str: ...


def budget_for(policy: BudgetPolicy, model: HasWindow) -> int:
    """The budget the harness plans against on `model`: thresholds, triggers and the "fits" test
    of a summary request are all fractions or differences of it. Never above the model's window;
    the window itself for a `window` preset without a budget of its own and for `none` presets."""
    window = model.window
    if policy.budget_means == "none" or policy.budget <= 0:
        return window
    return min(policy.budget, window) if window > 0 else policy.budget


def budget_label(policy: BudgetPolicy, model: HasWindow) -> str:
    """How a run's header names its budget: the number and what it means."""
    planned = budget_for(policy, model)
    if policy.budget_means == "none":
        return f"none (window {planned:,})"
    if policy.budget_means == "window" and policy.budget <= 0:
        return f"{planned:,} (the model window)"
    return f"{planned:,}"
