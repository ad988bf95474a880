"""`ctxbench presets`: list the policy presets and the SPEC ids each reproduces."""

from __future__ import annotations

import argparse

from ctxbench.policies.preset import load_policy, preset_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("presets", help="list policy presets", description=__doc__)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    for name in preset_names():
        pol = load_policy(name)
        print(f"{name:22s} {pol.description.strip()}")
        print(f"{'':22s} reproduces: {', '.join(pol.spec) or '-'}")
    return 0
