"""A Claude Code log none of whose requests bills a cache read or write (sent without cache marks:
DISABLE_PROMPT_CACHING, or a relay that drops them): every block gets 0 tokens, images and
thinking too, no block carries a mark, and the replay sends the billed input and caches nothing
(traces/importers/sizing_marks.py `NO_MARKS`)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.live.drive import png_bytes
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent
from tests.traces.importers.claude_code_lines import turn, write_log


def _uncached_log(tmp_path: Path, cached_at: int = -1) -> Path:
    """Five requests whose whole prompt is billed as input; the third user turn carries an image
    of 976 x 380 pixels (about 490 tokens by Anthropic's rule) and each reply a thinking block.
    `cached_at`: that request bills a cache read instead."""
    lines: list[dict[str, Any]] = []
    prompt = 18000
    for k in range(5):
        prompt += 0 if k == 0 else 900 + (600 if k == 2 else 0)
        read = prompt - 10 if k == cached_at else 0
        usage = {"input_tokens": prompt - read, "cache_read_input_tokens": read, "output_tokens": 60}
        t = f"2026-03-06T17:{k:02d}:00Z"
        user, reply = turn(
            k, "claude-sonnet-4-5", usage, asked=t, answered=t.replace(":00Z", ":05Z"),
            message_id=f"msg_{k:030d}", request_id=f"req_011C{k:020d}",
        )  # fmt: skip
        if k == 2:
            image = {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": "image/png",
                    "data": base64.b64encode(png_bytes(976, 380, 200, 0)).decode(),
                },
            }
            user["message"]["content"].append(image)
        reply["message"]["content"].insert(0, {"type": "thinking", "thinking": "z" * 700, "signature": "s"})
        lines += [user, reply]
    return write_log(tmp_path / "uncached.jsonl", lines)


def test_a_log_that_never_caches_is_unsized_unmarked_and_replayed_exactly(tmp_path: Path) -> None:
    res = import_paths([_uncached_log(tmp_path)], "claude-code")
    (trace,) = res.traces
    assert trace.header.meta["message_mark"] == "none"
    assert any("sent without cache marks" in n for n in res.report.notes)
    blocks = [c for e in trace.events if isinstance(e, MessageEvent) for c in e.content]
    assert any(c.kind == "image" for c in blocks)
    assert all(c.tokens == 0 and not c.cache for c in blocks)
    sf = compare(trace)
    assert sf.baseline.share_within == 1.0  # the image is not counted on top of the billed input
    assert all(
        r.predicted.cache_read == 0 and r.input_predicted == r.billed.input_tokens for r in sf.requests
    )


def test_one_cached_request_keeps_the_sizing_on_the_cached_part(tmp_path: Path) -> None:
    (trace,) = import_paths([_uncached_log(tmp_path, cached_at=3)], "claude-code").traces
    assert "message_mark" not in trace.header.meta
    images = [c for e in trace.events if isinstance(e, MessageEvent) for c in e.content if c.kind == "image"]
    assert images and all(c.tokens is None for c in images)  # the replay's image rule
