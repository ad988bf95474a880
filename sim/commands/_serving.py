"""Shared by `ctxbench serve` and `ctxbench proxy`: run a recording server until it is stopped."""

from __future__ import annotations

import signal
import sys
from typing import Any

from ctxbench.sim.serve.front import stop_front


def serve_until_stopped(srv: Any, label: str, banner: str, record: str | None) -> int:
    """Serve until SIGINT/SIGTERM, then close the ledger and write the recorded traces (if any)."""
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
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
            paths = srv.state.recorder.write(record)
            print(
                f"ctxbench {label}: {srv.state.ledger.count} requests; traces: {', '.join(map(str, paths))}",
                file=sys.stderr,
            )
            for failure in srv.state.recorder.failed:  # the other conversations are written
                print(f"ctxbench {label}: warning: trace not written: {failure}", file=sys.stderr)
    return 0
