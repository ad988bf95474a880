"""Helpers to build conversations directly with Transcript/BlockFactory."""

from __future__ import annotations

from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.content import TOOL_RESULT, TOOL_USE, Message
from ctxbench.sim.core.provider import Latency, Request
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript

F = BlockFactory()
ZERO_LATENCY = Latency(base_ttft=0.0, prefill_tps=1e18, output_tps=1e18)
EPS_LATENCY = Latency(base_ttft=1e-6, prefill_tps=1e18, output_tps=1e18)  # writes readable just after


def transcript(tools: int = 500, system: int = 2000, key: str = "s") -> Transcript:
    return Transcript(
        [F.text("tools", None, 0, key=f"tools-{key}", tokens=tools)],
        [F.text("system", None, 0, key=f"system-{key}", tokens=system)],
    )


def say(tr: Transcript, role: str, key: str, tokens: int) -> None:
    tr.append(Message.of(role, (F.text(role, None, 0, key=key, tokens=tokens),)))


def tool_round(tr: Transcript, k: int, output: int, result: int) -> None:
    """A response that is a tool call (`output` tokens) and the tool's result after it."""
    tr.append(
        Message.of("assistant", (F.text("assistant", None, 0, key=f"call{k}", kind=TOOL_USE, tokens=output),))
    )
    tr.append(Message.of("user", (F.text("user", None, 0, key=f"res{k}", kind=TOOL_RESULT, tokens=result),)))


def request(
    tr: Transcript,
    index: int = 0,
    conv: str = "c",
    key: str | None = None,
    session: str | None = None,
    output: int = 100,
    breakpoints: tuple[tuple[int, str], ...] = (),
) -> Request:
    return Request(
        tr, len(tr), "m", output, breakpoints, "gameplay", conv, index, cache_key=key, session_id=session
    )


def catalog(model: str):
    return model_info(model), prices(model)
