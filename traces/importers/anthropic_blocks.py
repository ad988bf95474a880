"""Anthropic Messages content as trace content: the blocks of a user or assistant message
(`user_contents`, `assistant_contents`: text, thinking, tool calls, tool results with their images,
inline images) and a response's usage (`anthropic_usage`). Shared by the importers that read
Anthropic messages: Claude Code session transcripts (traces/importers/claude_code.py) and
claude-trace HTTP logs (traces/importers/claude_trace.py). Blocks of a type the trace format has no
kind for are kept as their canonical JSON text and counted in the import report.
"""

from __future__ import annotations

from typing import Any

from ctxbench.traces.importers.base import ImportReport, b64_image, canonical, count, tool_use
from ctxbench.traces.model import Content, Usage


def _tool_result(block: dict[str, Any], report: ImportReport, where: str) -> list[Content]:
    inner = block.get("content")
    texts: list[str] = []
    images: list[Content] = []
    if isinstance(inner, str):
        texts.append(inner)
    elif isinstance(inner, list):
        for part in inner:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif part.get("type") == "image":
                img = _image(part, report, where)
                if img is not None:
                    images.append(img)
            else:
                texts.append(canonical(part))
    out = [
        Content(
            "tool_result",
            text="\n".join(texts),
            tool_id=str(block.get("tool_use_id", "")),
            is_error=bool(block.get("is_error", False)),
        )
    ]
    return out + images


def _image(block: dict[str, Any], report: ImportReport, where: str) -> Content | None:
    src = block.get("source") or {}
    data = src.get("data") if isinstance(src, dict) else None
    if not isinstance(data, str):
        report.skip("image without inline data (kept as a text placeholder)", where)
        return None
    w, h, n = b64_image(data)
    if not (w and h and n):
        report.skip("image whose size cannot be read (kept as a text placeholder)", where)
        return None
    import hashlib

    key = "img-" + hashlib.blake2b(data.encode("ascii", "replace"), digest_size=8).hexdigest()
    return Content("image", nbytes=n, key=key, width=w, height=h)


def user_contents(content: Any, report: ImportReport, where: str) -> list[Content]:
    if isinstance(content, str):
        return [Content("text", text=content)]
    out: list[Content] = []
    if not isinstance(content, list):
        report.skip("user message content neither text nor a list", where)
        return out
    for b in content:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            out.append(Content("text", text=str(b.get("text", ""))))
        elif t == "tool_result":
            out += _tool_result(b, report, where)
        elif t == "image":
            img = _image(b, report, where)
            out.append(img if img is not None else Content("text", text="[image]"))
        else:
            out.append(Content("text", text=canonical(b)))
            report.counts[f"user block {t} kept as text"] += 1
    return out


def assistant_contents(content: Any, report: ImportReport) -> list[Content]:
    out: list[Content] = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            out.append(Content("text", text=str(b.get("text", ""))))
        elif t == "thinking":
            out.append(Content("thinking", text=str(b.get("thinking", ""))))
        elif t == "redacted_thinking":
            out.append(Content("thinking", text=str(b.get("data", ""))))
        elif t == "tool_use":
            out.append(tool_use(b.get("input", {}), b.get("id", ""), str(b.get("name", "")) or "tool"))
        else:
            out.append(Content("text", text=canonical(b)))
            report.counts[f"assistant block {t} kept as text"] += 1
    return out


def billed_model(model: str, usage: Any, requested: Any = None) -> str:
    """The model a response was billed as: a fast-mode response (`usage.speed` "fast", else the
    request's `speed`) is the model's `-fast` variant with its own prices (sim/core/catalog.py `resolve`
    rule 6) and its own cache (providers.md §1.6, "Speed setting"); ccusage prices it so (#886)."""
    speed = usage.get("speed") if isinstance(usage, dict) and "speed" in usage else requested
    return f"{model}-fast" if speed == "fast" and model and not model.endswith("-fast") else model


def anthropic_usage(u: Any, where: str, at: str) -> Usage | None:
    """Usage of an Anthropic response (`at` = its dotted path in the line); None without one."""
    if not isinstance(u, dict) or "input_tokens" not in u:
        return None
    write = count(u, "cache_creation_input_tokens", where, at)
    w1h = count(u.get("cache_creation"), "ephemeral_1h_input_tokens", where, f"{at}.cache_creation")
    return Usage(
        input_tokens=count(u, "input_tokens", where, at),
        cache_read=count(u, "cache_read_input_tokens", where, at),
        cache_write_5m=max(0, write - w1h),
        cache_write_1h=min(w1h, write),
        output_tokens=count(u, "output_tokens", where, at),
    )
