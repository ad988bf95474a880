"""`ctxbench providers`: the provider profiles, their parameters and the source of each number."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxbench.sim.core.profiles import ProfileError, default_model, profile, profile_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "providers", help="list provider profiles with their parameters and sources", description=__doc__
    )
    p.add_argument("name", nargs="?", help="show one profile in full")
    p.add_argument("--json", action="store_true", help="print profiles as JSON")
    p.set_defaults(handler=handle)


def _row(name: str) -> dict[str, Any]:
    prof = profile(name)
    sources = dict(prof.pop("sources", None) or {})
    desc = " ".join(str(prof.pop("description", "")).split())
    kind = str(prof.pop("provider", name))
    prof.pop("model", None)
    return {
        "profile": name,
        "provider": kind,
        "model": default_model(name),
        "description": desc,
        "params": prof,
        "sources": sources,
    }


def handle(args: argparse.Namespace) -> int:
    try:
        names = [args.name] if args.name else profile_names()
        rows = [_row(n) for n in names]
    except ProfileError as exc:
        print(f"ctxbench providers: {exc}")
        return 2
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    for r in rows:
        print(f"{r['profile']}  (model {r['provider']}, default model {r['model'] or '-'})")
        if r["description"]:
            print(f"  {r['description']}")
        keys = list(r["params"]) + [k for k in r["sources"] if k not in r["params"]]
        for k in keys:
            v = r["params"].get(k, "(model/price table)" if k in ("min_cacheable", "prices") else "(default)")
            src = r["sources"].get(k, "")
            print(f"  {k:<22} {json.dumps(v, default=str):<28} {src}")
        print()
    return 0
