"""Cache-mark strategies: where a harness puts its (at most four) cache breakpoints."""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.policies.view import View
from ctxbench.sim.core.names import Breakpoints, Ttl
from ctxbench.sim.core.registry import register


def _dedupe(positions: list[int], ttl: Ttl, n: int) -> Breakpoints:
    """Distinct valid positions in ascending order, each with `ttl`."""
    return tuple([(p, ttl) for p in sorted(set(positions)) if 0 <= p < n])


def _previous_end(view: View) -> int:
    """The previous request's end, or the pinned exchange's end before the first reply after the
    guide and after a compaction (H-23, H-24)."""
    return view.prep_end if view.first_after_reset or view.prev_end < 0 else view.prev_end


@register("marks", "h-openrouter")
@dataclass(frozen=True)
class OpenRouterMarks:
    """H-23: system prompt, tool definitions, where the previous request ended (read back within
    the ~20-block lookback), and the newest message (written)."""

    ttl: Ttl = "5m"

    def place(self, view: View) -> Breakpoints:
        tr = view.tr
        n = len(tr)
        return _dedupe([tr.tools_end - 1, tr.system_end - 1, _previous_end(view), n - 1], self.ttl, n)


@register("marks", "h-direct")
@dataclass(frozen=True)
class DirectMarks:
    """H-24: system prompt (covering the tools before it), end of the pinned preparation
    exchange (read again after a compaction), previous request's end, newest message."""

    ttl: Ttl = "5m"

    def place(self, view: View) -> Breakpoints:
        tr = view.tr
        n = len(tr)
        prev = view.prev_end if not view.first_after_reset else -1
        return _dedupe([tr.system_end - 1, view.prep_end, prev, n - 1], self.ttl, n)


@register("marks", "last-block")
@dataclass(frozen=True)
class LastBlockMarks:
    """One mark on the newest block, like the API's automatic caching (providers.md §1.2)."""

    ttl: Ttl = "5m"

    def place(self, view: View) -> Breakpoints:
        n = len(view.tr)
        return ((n - 1, self.ttl),) if n else ()


@register("marks", "none")
@dataclass(frozen=True)
class NoMarks:
    """No cache marks: on an explicit-breakpoint provider nothing is ever cached."""

    def place(self, view: View) -> Breakpoints:
        return ()


@register("marks", "opencode")
@dataclass(frozen=True)
class OpencodeMarks:
    """opencode's ProviderTransform caching (opencode-ai 1.18.33, as recorded against `ctxbench
    serve` on the Anthropic API, tests/bench/data/whatif/opencode-*): a mark on each of the first
    two system messages and on the last block of each of the last two non-system messages."""

    ttl: Ttl = "5m"

    def place(self, view: View) -> Breakpoints:
        tr = view.tr
        n, system = len(tr), list(range(tr.tools_end, tr.system_end))[:2]
        msgs = len(tr.messages)
        last = [tr.message_end(i) - 1 for i in range(max(0, msgs - 2), msgs)]
        return _dedupe([*system, *last], self.ttl, n)
