"""Shared by the verbs that talk to a live server: `serve` and `proxy` run a recording server
until stopped; `drive` and `validate` take the same trace, policy and wire options."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any


def add_drive_options(p: argparse.ArgumentParser) -> None:
    """The options of `drive` and `validate`: what to replay, under which policy, over which API."""
    from ctxbench.traces.generators.spec import TRACE_HELP

    p.add_argument("trace", help=TRACE_HELP)
    p.add_argument("--policy", required=True, help="preset name (see `ctxbench presets`) or YAML path")
    p.add_argument(
        "--api",
        choices=("anthropic", "chat"),
        default="anthropic",
        help="wire API the SDK speaks: anthropic Messages or OpenAI chat completions (default anthropic)",
    )
    p.add_argument("--no-stream", action="store_true", help="non-streaming requests")


def drive_inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    """(trace, policy) of `add_drive_options`, after checking that the SDK of `--api` (the `live`
    extra) is installed, so a missing extra is named before any work."""
    from ctxbench.bench.cli._extras import require
    from ctxbench.policies.preset import load_policy
    from ctxbench.traces.generators.spec import open_trace

    require("anthropic" if args.api == "anthropic" else "openai")
    return open_trace(args.trace), load_policy(args.policy)


def serve_until_stopped(srv: Any, label: str, banner: str, record: str | None) -> int:
    """Serve until SIGINT/SIGTERM, then close the ledger and the recorded traces (if any), which
    were written as the conversations progressed."""
    from ctxbench.sim.serve.front import stop_front

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    if record:  # traces written as conversations progress (issue 32)
        srv.state.recorder.stream_to(record)
    print(f"ctxbench {label}: {banner}", file=sys.stderr, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):  # a second stop signal must not cut the recording
            signal.signal(sig, signal.SIG_IGN)
        stop_front(srv, serving=False)  # requests in flight finish and are recorded
        srv.state.ledger.close()
        if record:
            paths = srv.state.recorder.finish()
            written = ", ".join(map(str, paths)) or "none (no conversation was recorded)"
            print(f"ctxbench {label}: {srv.state.ledger.count} requests; traces: {written}", file=sys.stderr)
            for failure in srv.state.recorder.failed:  # the other conversations are written
                print(f"ctxbench {label}: warning: trace not written: {failure}", file=sys.stderr)
    return 0
