"""`ReadAhead` reads a folder's Claude Code logs on every core (issue 28: `ctxbench billed FOLDER` as
fast as ccusage): the reading (bench/billed/fast.py `read_requests`) is most of a run and each log's
is its own, while the sums depend on the order (a copy is counted in the earliest log). So forked
processes read the later logs of the billing order, the parent the first ones as it sums them, and
the parent takes each child's readings when its sums reach them: the same figures, notes and errors
as reading them one after the other, in the same order.
"""

from __future__ import annotations

import gc
import marshal
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxbench.bench.billed.fast import Read


def cores() -> int:
    """The processors this process may run on (its affinity where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _may_fork() -> bool:
    """A fork is safe: the system has one and this process runs no other thread (a thread's locks
    would be copied held)."""
    threading = sys.modules.get("threading")
    return hasattr(os, "fork") and (threading is None or threading.active_count() == 1)


def _log_bytes(path: Path) -> int:
    """The bytes `read_requests` reads for a log: its session file and its sub-agents' (0 when
    they cannot be listed: its reading, in the parent, then meets the error)."""
    from ctxbench.traces.importers.claude_code_files import related_files

    try:
        return sum(f.stat().st_size for f in related_files(path))
    except OSError:
        return 0


PARALLEL_BYTES = 4_000_000  # below this a fork (~2 ms, and its copied pages) costs about what it saves
PARENT_SHARE = 0.85  # of an even share: the parent also sums every log and takes the children's readings


def _runs(paths: list[Path], sizes: list[int], parts: int) -> list[list[Path]]:
    """`paths` cut into at most `parts` runs, in their order, by their bytes (`sizes`): the first
    (the parent's) `PARENT_SHARE` of an even share, the others even."""
    first = sum(sizes) / parts * PARENT_SHARE
    rest = (sum(sizes) - first) / (parts - 1)
    runs: list[list[Path]] = [[]]
    done = 0  # bytes before this log
    for path, n in zip(paths, sizes, strict=True):
        if runs[-1] and done + n / 2 > first + rest * (len(runs) - 1) and len(runs) < parts:
            runs.append([])
        runs[-1].append(path)
        done += n
    return runs


class ReadAhead:
    """`read_requests` of Claude Code logs (module docstring), as `log_totals`' `read`: `paths` in
    the order they will be asked for, cut in one run per core of about the same bytes; a forked
    child reads each run but the first, which the parent reads when asked, as it would alone. A log
    asked for gets its child's reading, else (the first run, a log the child failed on, a child
    that could not start or died) it is read here, so its error is raised here, in order. Without
    a second core, a folder under `min_bytes` or a thread running, nothing is forked. Use it in a
    `with`: a child whose run is never asked for (an error stopped the sums) is ended."""

    def __init__(self, paths: list[Path], workers: int | None = None, min_bytes: int | None = None) -> None:
        self._ahead: dict[Path, Read] = {}  # read by a child, not asked for yet
        self._child: dict[Path, int] = {}  # which child reads a log
        self._kids: list[tuple[int, int, list[Path]] | None] = []  # pid, pipe, run; None: taken in
        paths = list(dict.fromkeys(paths))  # a log given twice: read ahead once
        parts = min(workers or cores(), len(paths))
        if parts < 2 or not _may_fork():
            return
        sizes = [_log_bytes(p) for p in paths]
        if sum(sizes) < (PARALLEL_BYTES if min_bytes is None else min_bytes):
            return
        import ctxbench.bench.billed.fast  # noqa: F401 - once, before the fork, not in every process

        for run in _runs(paths, sizes, parts)[1:]:
            if not self._fork(run):
                break  # no more processes: the parent reads the rest

    def __call__(self, path: Path) -> Read:
        from ctxbench.bench.billed.fast import read_requests

        k = self._child.pop(path, None)
        if k is not None and self._kids[k] is not None:
            self._take(k)
        return self._ahead.pop(path) if path in self._ahead else read_requests(path)

    def _fork(self, run: list[Path]) -> bool:
        """Start a child reading `run` into a pipe; False when the system gives no process."""
        try:
            r, w = os.pipe()
        except OSError:
            return False
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return False
        if pid == 0:  # the child: never returns to the caller
            code = 1
            try:
                gc.disable()  # no finalizer of the parent's garbage runs twice (once here); it lives briefly
                for fd in [r] + [kid[1] for kid in self._kids if kid is not None]:
                    os.close(fd)  # the pipes of the parent's other children: theirs alone
                _read_into(run, w)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        for path in run:
            self._child[path] = len(self._kids)
        self._kids.append((pid, r, run))
        return True

    def _take(self, k: int) -> None:
        """Child `k`'s readings (waiting for it to finish); none if it failed: read here instead."""
        from ctxbench.bench.billed.fast import from_wire

        kid, self._kids[k] = self._kids[k], None
        assert kid is not None
        pid, r, run = kid
        data = b""
        try:
            with os.fdopen(r, "rb") as f:
                data = f.read()
        except OSError:
            pass
        try:
            status = os.waitpid(pid, 0)[1]
        except ChildProcessError:  # reaped already (SIGCHLD ignored): its data says if it finished
            status = 0
        if status != 0:
            return
        try:
            got = {run[i]: from_wire(wire) for i, wire in marshal.loads(data)}
        except (EOFError, ValueError, TypeError, IndexError):
            return
        self._ahead.update(got)

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        """End the children still running (their runs were not asked for)."""
        left = [kid for kid in self._kids if kid is not None]
        self._kids = [None] * len(self._kids)
        if left:
            import signal  # not at every run's start-up: a run asks for every child's logs

            for pid, r, _ in left:
                os.close(r)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


def _read_into(run: list[Path], fd: int) -> None:
    """A child's work: `read_requests` of each log of `run`, marshalled into the pipe `fd` as
    (index in `run`, reading); a log that raises is left out (the parent reads it and meets it)."""
    from ctxbench.bench.billed.fast import read_requests, to_wire

    out = []
    for i, path in enumerate(run):
        try:
            out.append((i, to_wire(read_requests(path))))
        except Exception:  # the parent reads it again and raises it, in order
            continue
    with os.fdopen(fd, "wb") as f:
        f.write(marshal.dumps(out))
