"""The options that change every run of a command (`run`, `compare`, `sweep`): `--policy-set`,
`--provider-set` and `--tokenizer`, added and parsed here once so the three verbs accept and check
them the same way."""

from __future__ import annotations

import argparse

from ctxbench.bench.runs import RunOptions
from ctxbench.policies.preset import policy_assignments
from ctxbench.sim.core.profiles import provider_assignments
from ctxbench.sim.core.tokens import TOKENIZERS


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--provider-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any provider parameter, dotted for nested ones: faults.rates.rate_limit=0.05, "
        "faults.retry_after=3, latency.base_ttft=1.2, random_evict_rate=0.01 (repeat; checked like YAML)",
    )
    p.add_argument(
        "--policy-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a preset value: top-level (retries=3, budget_min=16000) or a component's, dotted "
        "(marks.ttl=1h, "
        "compaction.summary_bytes=12000, compaction.buffer=0; repeat; checked "
        "like YAML)",
    )
    p.add_argument(
        "--tokenizer",
        choices=sorted(TOKENIZERS),
        default="rate",
        help="true token counts of text: the calibrated byte rate (default) or exact o200k/cl100k "
        "(extra `tokenizers`; see `ctxbench tokenizers`)",
    )


def run_options(args: argparse.Namespace) -> RunOptions:
    """The parsed options; a bad KEY=VALUE is a one-line error (exit 2) before any run starts."""
    policy_assignments(args.policy_set)  # checked here, applied per preset (bench/runs.py)
    return RunOptions(tuple(args.policy_set), provider_assignments(args.provider_set), args.tokenizer)
