"""The server half of the HTTP front (sim/serve/front.py): threads, a bound on concurrent
connections, a budget per client address, and a stop that lets requests in flight finish.

A connection budget per client address (issue 32): at most `max_per_client` connections of one
address are served at once (default: half of `max_connections`), so slow clients from one address
cannot take every slot. A connection past its address's budget takes no slot: it waits, as one in
the listen backlog does, for one of that address's connections to end (each ends at the latest at
its request deadline, `read_timeout`), then is served; at most `max_connections` connections wait
so, more are closed. The budget is this project's own limit (no API documents one).
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FrontServer(ThreadingHTTPServer):
    """A threading server with a read timeout, a bound on concurrent connections and a stop that
    lets requests in flight finish (and be recorded)."""

    daemon_threads = True
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],  # sim/serve/front.py FrontHandler
        read_timeout: float,
        max_connections: int,
        max_per_client: int = 0,
    ) -> None:
        self.read_timeout = read_timeout
        self.started = time.monotonic()
        self._slots = threading.BoundedSemaphore(max_connections)
        self.max_per_client = max_per_client or max(1, max_connections // 2)
        self._per_client: dict[str, int] = {}
        self._over_slots = threading.BoundedSemaphore(max_connections)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self._turn = threading.Condition(self._open_lock)
        self._stopping = threading.Event()
        self._ids = 0
        super().__init__(address, handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def next_id(self, prefix: str) -> str:
        with self._open_lock:
            self._ids += 1
            return f"{prefix}{self._ids:024d}"

    def track(self, conn: socket.socket, opened: bool) -> None:
        with self._open_lock:
            (self._open.add if opened else self._open.discard)(conn)

    def process_request(self, request: Any, client_address: Any) -> None:
        ip = str(client_address[0]) if isinstance(client_address, tuple) else ""
        with self._open_lock:
            admitted = self._per_client.get(ip, 0) < self.max_per_client
            if admitted:
                self._per_client[ip] = self._per_client.get(ip, 0) + 1
        if admitted:
            self._admit(request, client_address, ip)
        elif self._over_slots.acquire(blocking=False):
            threading.Thread(target=self._wait_turn, args=(request, client_address, ip), daemon=True).start()
        else:  # more connections waiting past their budget than could ever be served: dropped
            self.shutdown_request(request)

    def _admit(self, request: Any, client_address: Any, ip: str) -> None:
        # Bound on concurrent connections: wait for a slot (the kernel backlog queues the rest).
        while not self._slots.acquire(timeout=0.05):
            if self._stopping.is_set():
                self._left(ip)
                self.shutdown_request(request)
                return
        # A stop signal (KeyboardInterrupt) can land while the connection's thread starts, after it
        # runs: that thread gives its slot back, so an interrupt releases none here (a second
        # release raised ValueError and hid the stop); at a stop, a slot it keeps does not matter.
        try:
            super().process_request(request, client_address)
        except Exception:  # the thread did not start: its slot is free again
            self._slots.release()
            self._left(ip)
            raise

    def _wait_turn(self, request: Any, client_address: Any, ip: str) -> None:
        """A connection past its address's budget waits (taking no slot, as one in the listen
        backlog would) for one of that address's connections to end, then is served."""
        admitted = False
        try:
            with self._turn:
                while not self._stopping.is_set():
                    if self._per_client.get(ip, 0) < self.max_per_client:
                        self._per_client[ip] = self._per_client.get(ip, 0) + 1
                        admitted = True
                        break
                    self._turn.wait(0.05)
        finally:
            self._over_slots.release()
        if admitted:
            self._admit(request, client_address, ip)
        else:
            self.shutdown_request(request)

    def _left(self, ip: str) -> None:
        with self._turn:
            n = self._per_client.get(ip, 1) - 1
            if n > 0:
                self._per_client[ip] = n
            else:
                self._per_client.pop(ip, None)
            self._turn.notify_all()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()
            self._left(str(client_address[0]) if isinstance(client_address, tuple) else "")

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            super().handle_error(request, client_address)

    def stop_reading(self) -> None:
        """End reads on every open connection: idle keep-alive connections close at once, a
        request in flight finishes writing its answer (its record is written before that)."""
        self._stopping.set()
        with self._open_lock:
            conns = list(self._open)
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RD)


def add_front_args(p: Any) -> None:
    """`--read-timeout` and `--max-connections` of `serve` and `proxy` (defaults: ServeConfig)."""
    p.add_argument(
        "--read-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a request (head and body) not received in full this long after its first byte is "
        "answered 408; idle connections close after as long (default 60)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=256,
        metavar="N",
        help="connections served at once; more wait in the listen backlog (default 256)",
    )
    p.add_argument(
        "--max-per-client",
        type=int,
        default=0,
        metavar="N",
        help="connections of one client address served at once; more are waits for one to end "
        "(default: half of --max-connections)",
    )


def stop_front(srv: FrontServer, serving: bool = True) -> None:
    """Stop accepting, let requests in flight finish, close the listening socket."""
    srv._stopping.set()
    if serving:
        srv.shutdown()
    srv.stop_reading()
    srv.server_close()  # joins the connection threads (block_on_close)
