"""`ctxbench proxy --upstream URL`: record a harness's traffic to a real provider (credentials redacted)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxbench.bench.cli._serving import serve_until_stopped
from ctxbench.sim.serve.front import add_front_args
from ctxbench.sim.serve.proxy import ProxyServer, ProxyState
from ctxbench.sim.serve.record import Ledger


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "proxy", help="record traffic to a real provider into the trace format", description=__doc__
    )
    p.add_argument("--upstream", required=True, help="provider base URL, e.g. https://api.anthropic.com")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=8780, help="port to listen on (default 8780; 0 = any free port)"
    )
    p.add_argument("--record", metavar="DIR", required=True, help="folder for requests.jsonl and the traces")
    add_front_args(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    Path(args.record).mkdir(parents=True, exist_ok=True)
    srv = ProxyServer(
        ProxyState(args.upstream.rstrip("/"), Ledger(Path(args.record) / "requests.jsonl")),
        args.host,
        args.port,
        args.read_timeout,
        args.max_connections,
        args.max_per_client,
    )
    return serve_until_stopped(srv, "proxy", f"{srv.url} -> {args.upstream}", args.record)
