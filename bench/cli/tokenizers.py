"""`ctxbench tokenizers`: which token counts are exact offline and which are a calibrated rate.

`--tokenizer rate` (the default everywhere) counts text at o200k's measured bytes per token by
kind (4.48 prose, 4.16 code, 3.10 JSON/Unicode; research/ecosystem.md §1.6) times the model's
tokenizer density (`tokenizer_scale`, sim/data/models.yaml). `--tokenizer o200k|cl100k` counts text
exactly with toktok-rs (byte-identical to tiktoken, ecosystem.md §1.3; extra `tokenizers`). Blocks
recorded with billed token counts (imported logs) and size-only synthetic blocks keep their counts.

`--measure` measures the rate's error instead of citing it: per 2 KB chunk of the real recorded
sessions (`$CTXBENCH_REAL`) and the samples' text, the rate against exact o200k and cl100k; for
Claude, the rate against the billed input of each request of the claude-trace log
(bench/rate_error.py).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxbench.sim.core.catalog import model_info, model_names
from ctxbench.sim.core.tokens import TOKENIZERS, toktok_available

# The exact offline encoding of each provider's models, where one exists (ecosystem.md §1.3:
# OpenAI's current models use o200k_base; §1.5: no Claude 3+ tokenizer is available offline;
# Gemini, DeepSeek and Meta tokenizers are not among the offline ones researched).
OFFLINE_ENCODING = {"openai": "o200k"}

# What the rate is known to miss for models without an offline tokenizer (ecosystem.md §1.6 on its
# 1 MB corpus: bytes/2.5 over-counts o200k 1.659x and the Claude legacy tokenizer 1.565x, so Claude
# legacy counts 1.659/1.565 = 1.06x o200k's tokens; a fixed byte rate is off 0.52x-1.48x per 2 KB
# chunk against o200k). Claude 4.7+ counts ~30 % more (providers.md §1.14, tokenizer_scale 1.3).
RATE_ERROR = {
    "anthropic": "rate ~6 % under Claude legacy on totals, 0.52-1.48x per 2 KB chunk (ecosystem.md §1.6)",
    "openai": "exact with --tokenizer o200k; the rate: o200k totals, 0.52-1.48x per 2 KB chunk (§1.6)",
}
UNMEASURED = "no offline tokenizer researched: the rate's error is unmeasured (o200k-like assumed)"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tokenizers",
        help="token counters: exact offline encodings and the calibrated rate",
        description=__doc__,
    )
    p.add_argument("--json", action="store_true", help="print the tokenizers and models as JSON")
    p.add_argument(
        "--measure",
        action="store_true",
        help="measure the rate's error on real text: per 2 KB chunk against exact o200k/cl100k (extra "
        "`tokenizers`), and Claude's billed counts in the claude-trace log",
    )
    p.add_argument(
        "--real",
        metavar="DIR",
        help="the real recorded sessions for --measure (default $CTXBENCH_REAL, else ../shared/traces-real)",
    )
    p.set_defaults(handler=handle)


def listing() -> dict[str, Any]:
    """The `--tokenizer` choices (installed or not) and, per model, its exact offline encoding
    (or none) and what the rate is known to miss."""
    have = toktok_available()
    tokenizers = [
        {"name": name, "encoding": enc, "installed": enc is None or have,
         "needs": None if enc is None else "pip install 'ctxbench[tokenizers]'"}
        for name, enc in TOKENIZERS.items()
    ]  # fmt: skip
    models = []
    for name in model_names():
        info = model_info(name)
        enc = OFFLINE_ENCODING.get(info.provider)
        models.append(
            {
                "model": name,
                "provider": info.provider,
                "offline_tokenizer": enc,
                "tokenizer_scale": info.tokenizer_scale,
                "rate_error": RATE_ERROR.get(info.provider, UNMEASURED),
            }
        )
    return {"tokenizers": tokenizers, "models": models}


def handle(args: argparse.Namespace) -> int:
    if args.measure:
        return measure(args)
    data = listing()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print("--tokenizer choices:")
    for t in data["tokenizers"]:
        state = "installed" if t["installed"] else f"not installed ({t['needs']})"
        print(f"  {t['name']:8s} {t['encoding'] or 'calibrated bytes per token by kind':36s} {state}")
    print("\nmodels (offline tokenizer · density scale · what the rate misses):")
    for m in data["models"]:
        enc = m["offline_tokenizer"] or "none"
        print(f"  {m['model']:24s} {enc:6s} x{m['tokenizer_scale']:<4g} {m['rate_error']}")
    print("\nmeasure the rate's error on real text: ctxbench tokenizers --measure")
    return 0


def measure(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ctxbench.bench.fidelity.report import DEFAULT_DIR
    from ctxbench.bench.rate_error import format_measure
    from ctxbench.bench.rate_error import measure as run_measure

    if args.real and not Path(args.real).is_dir():  # named on purpose: never dropped silently (issue 31 #5)
        raise ValueError(f"--real {args.real}: no such folder of real recorded sessions")
    data = run_measure(Path(args.real) if args.real else DEFAULT_DIR)
    print(json.dumps(data, indent=2) if args.json else format_measure(data))
    return 0
