"""`ctxbench serve`: the provider models behind the Anthropic, OpenAI and Gemini wire APIs (issue #7)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxbench.bench.cli._serving import serve_until_stopped
from ctxbench.sim.serve.front import add_front_args
from ctxbench.sim.serve.script import Scripter, load_script, replay_script
from ctxbench.sim.serve.server import ServeConfig, make_server
from ctxbench.traces.format import read_trace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the provider models over HTTP (Anthropic / OpenAI / Gemini APIs)",
        description=__doc__,
    )
    add_server_args(p)
    p.set_defaults(handler=handle)


def add_server_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: loopback only)")
    add_front_args(p)
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any free port)")
    p.add_argument("--provider", default="anthropic", help="provider profile (default anthropic)")
    p.add_argument(
        "--model",
        default="claude-sonnet-4-6",
        help="model GET /v1/models lists (requests may name any model of sim/data/models.yaml; "
        "an unknown one is answered 404, as the real API does)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of every random draw: fault and latency draws, best-effort evictions (default 0)",
    )
    p.add_argument(
        "--clock",
        choices=("wall", "header"),
        default="wall",
        help="wall: seconds since start; header: the x-ctxbench-now header (reference driver)",
    )
    p.add_argument(
        "--latency",
        choices=("auto", "none", "profile"),
        default="auto",
        help="provider latency model: auto = none with the wall clock (replies are instant)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--replay", metavar="TRACE", help="reply with the replies of TRACE, per conversation")
    mode.add_argument("--task", metavar="SCRIPT", help="task mode: YAML/JSON script of tool calls")
    p.add_argument(
        "--record",
        metavar="DIR",
        help="write requests.jsonl (redacted) and one trace per conversation to DIR",
    )


def scripter_from(args: argparse.Namespace) -> Scripter:
    if args.replay:
        return replay_script(read_trace(args.replay))
    if args.task:
        return load_script(args.task)
    return Scripter()


def handle(args: argparse.Namespace) -> int:
    ledger = str(Path(args.record) / "requests.jsonl") if args.record else None
    if args.read_timeout <= 0 or args.max_connections < 1 or args.max_per_client < 0:
        raise ValueError("--read-timeout must be > 0, --max-connections at least 1, --max-per-client >= 0")
    cfg = ServeConfig(
        args.host,
        args.port,
        args.provider,
        args.model,
        args.seed,
        args.clock,
        args.latency,
        ledger=ledger,
        read_timeout=args.read_timeout,
        max_connections=args.max_connections,
        max_per_client=args.max_per_client,
    )
    srv = make_server(cfg, scripter_from(args))
    banner = f"listening on {srv.url} (provider {args.provider})"
    return serve_until_stopped(srv, "serve", banner, args.record)
