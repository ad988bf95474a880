"""`ctxbench presets`: list the policy presets and the SPEC ids each reproduces."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from ctxbench.policies.preset import Policy, load_policy, preset_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("presets", help="list policy presets", description=__doc__)
    p.add_argument(
        "--json",
        action="store_true",
        help="print every preset as JSON: name, harness, provider, budget range, SPEC ids, components",
    )
    p.set_defaults(handler=handle)


def _component(c: Any) -> dict[str, Any]:
    from ctxbench.sim.core.registry import registered_name

    params = dataclasses.asdict(c) if dataclasses.is_dataclass(c) and not isinstance(c, type) else {}
    return {"name": registered_name(c), **params}


def preset_record(name: str, pol: Policy) -> dict[str, Any]:
    """One preset as a flat JSON-ready mapping (components with their parameters)."""
    return {
        "name": name,
        "policy": pol.name,
        "description": pol.description.strip(),
        "harness": pol.harness,
        "provider": pol.provider,
        "budget": pol.budget,
        "budget_means": pol.budget_means,
        "budget_min": pol.budget_min,
        "budget_max": pol.budget_max,
        "spec": list(pol.spec),
        "sources": list(pol.sources),
        **{k: _component(getattr(pol, k)) for k in ("estimator", "eviction", "compaction", "marks")},
    }


def _budget(pol: Policy) -> str:
    """What --budget means for this preset (policies/budget.py)."""
    if pol.budget_means == "none":
        return "refused (nothing depends on it)"
    if pol.budget_means == "window":
        own = f"{pol.budget:,}" if pol.budget else "the model window"
        return f"overrides the model window (default {own})"
    return f"working budget (default {pol.budget:,}, H-11)"


def handle(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([preset_record(n, load_policy(n)) for n in preset_names()], indent=2, default=str))
        return 0
    for name in preset_names():
        pol = load_policy(name)
        print(f"{name:22s} {pol.description.strip()}")
        print(f"{'':22s} reproduces: {', '.join(pol.spec) or '-'} · --budget: {_budget(pol)}")
    return 0
