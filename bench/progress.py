"""Progress of long batches (sweeps, `fidelity --all-real`, `ctxbench import` of many files or
large logs) through tqdm, a kept library declared in pyproject.toml. The bar goes to a stream
(stderr), never to stdout, so printed results stay byte-identical with or without it."""

from __future__ import annotations

import sys
from typing import IO, Any


class Progress:
    """A tqdm bar on `stream`: with rate and ETA on a terminal; on a pipe or log file, a line at
    most every 10 s. None as the stream: silent."""

    def __init__(
        self,
        total: int,
        done: int,
        stream: IO[str] | None,
        label: str = "sweep",
        unit: str = "run",
        unit_scale: bool = False,
    ) -> None:
        self.bar: Any = None
        if stream is None:
            return
        from tqdm import tqdm

        tty = stream.isatty()
        self.bar = tqdm(
            total=total,
            initial=done,
            desc=label,
            unit=unit,
            unit_scale=unit_scale,
            file=stream,
            dynamic_ncols=tty,
            ncols=None if tty else 80,
            mininterval=0.1 if tty else 10.0,
            ascii=not tty,
        )

    def update(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def terminal_stderr(quiet: bool = False) -> IO[str] | None:
    """stderr when it is a terminal and the user did not ask for quiet or machine-readable output;
    otherwise None (no progress at all, so logs and captured output stay unchanged)."""
    if quiet or not sys.stderr.isatty():
        return None
    return sys.stderr
