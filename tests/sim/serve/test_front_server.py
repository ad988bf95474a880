"""The connection slots of the HTTP front (sim/serve/front_server.py): a stop signal that lands while
a connection's thread starts stops the server, and every slot is given back once."""

from __future__ import annotations

import socket
import socketserver
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from ctxbench.sim.serve.front_server import FrontServer


class _Quiet(BaseHTTPRequestHandler):
    def handle(self) -> None:  # the connection is closed at once: only the slots are under test
        return


def _server(max_connections: int = 2) -> FrontServer:
    return FrontServer(("127.0.0.1", 0), _Quiet, read_timeout=1.0, max_connections=max_connections)


def _free_slots(srv: FrontServer) -> int:
    """How many slots can be taken now (each taken one is given back)."""
    n = 0
    while srv._slots.acquire(blocking=False):
        n += 1
    for _ in range(n):
        srv._slots.release()
    return n


def test_a_stop_while_the_thread_starts_is_not_hidden_and_frees_the_slot_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    srv = _server()
    started: list[threading.Thread] = []

    def start_then_interrupt(self: Any, request: Any, client_address: Any) -> None:
        t = threading.Thread(target=self.process_request_thread, args=(request, client_address))
        t.start()
        started.append(t)
        t.join(5)  # the connection is served and its slot given back before the signal lands
        raise KeyboardInterrupt  # SIGTERM's handler (bench/cli/_serving.py)

    monkeypatch.setattr(socketserver.ThreadingMixIn, "process_request", start_then_interrupt)
    b = None
    try:
        b = socket.create_connection(srv.server_address[:2])
        conn, addr = srv.socket.accept()
        with pytest.raises(KeyboardInterrupt):  # not a ValueError from a second release
            srv.process_request(conn, addr)
        assert _free_slots(srv) == 2  # the thread gave its slot back; nothing else did
        assert srv._per_client == {}
    finally:
        if b is not None:
            b.close()
        srv.server_close()


def test_a_thread_that_cannot_start_gives_its_slot_back(monkeypatch: pytest.MonkeyPatch) -> None:
    srv = _server()

    def cannot_start(self: Any, request: Any, client_address: Any) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(socketserver.ThreadingMixIn, "process_request", cannot_start)
    b = None
    try:
        b = socket.create_connection(srv.server_address[:2])
        conn, addr = srv.socket.accept()
        with pytest.raises(RuntimeError):
            srv.process_request(conn, addr)
        conn.close()
        assert _free_slots(srv) == 2 and srv._per_client == {}
    finally:
        if b is not None:
            b.close()
        srv.server_close()
