"""Small logs written for tests/bench/test_ccusage_other_formats.py, and where ccusage 20.0.24
looks for each format's logs (the layout its figures there were recorded over)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# ccusage sub-command -> (environment variable naming its data folder, where the logs go under it)
LAYOUT = {
    "codex": ("CODEX_HOME", "sessions/YYYY/MM/DD/rollout-*.jsonl, archived_sessions/rollout-*.jsonl"),
    "gemini": ("GEMINI_DATA_DIR", "tmp/<project hash>/chats/session-*.json or .jsonl"),
    "opencode": ("OPENCODE_DATA_DIR", "opencode.db, or storage/{session,message,part}/ (opencode < 1.2)"),
}


def _reply(k: int, t: str, tokens: dict[str, int], model: str) -> dict[str, object]:
    return {"id": f"g{k}", "timestamp": t, "type": "gemini", "content": f"answer {k}", "model": model,
            "tokens": {**tokens, "total": sum(tokens.values()) - tokens.get("cached", 0)}}  # fmt: skip


def gemini_pair(folder: Path) -> list[Path]:
    """Two Gemini CLI 0.5-style `.json` chat files of one sessionId (the CLI's second file of a
    session), replies with `thoughts` tokens, one with `tool` tokens; the second file switches to
    Flash."""
    sid = "5e551011-0000-4000-8000-000000000001"
    days = ("2025-09-17T07:25", "2025-09-17T07:30")
    replies = (
        [({"input": 12000, "output": 150, "cached": 0, "thoughts": 420, "tool": 0}, "gemini-2.5-pro"),
         ({"input": 12600, "output": 90, "cached": 11000, "thoughts": 0, "tool": 700}, "gemini-2.5-pro")],
        [({"input": 13000, "output": 300, "cached": 12000, "thoughts": 1234, "tool": 0}, "gemini-2.5-pro"),
         ({"input": 14000, "output": 70, "cached": 0, "thoughts": 55, "tool": 0}, "gemini-2.5-flash")],
    )  # fmt: skip
    out = []
    for n, (day, rows) in enumerate(zip(days, replies, strict=True)):
        msgs: list[dict[str, object]] = []
        for k, (tokens, model) in enumerate(rows):
            t = f"{day}:{10 + k:02d}.000Z"
            msgs.append({"id": f"u{n}{k}", "timestamp": t, "type": "user", "content": f"question {k}"})
            msgs.append(_reply(10 * n + k, t, tokens, model))
        doc = {"sessionId": sid, "projectHash": "ab" * 32, "startTime": f"{day}:00.000Z",
               "lastUpdated": f"{day}:59.000Z", "messages": msgs}  # fmt: skip
        path = folder / f"session-{day.replace(':', '-')}-5e551011.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out.append(path)
    return out


def codex_without_model(path: Path) -> Path:
    """A Codex 0.34-style rollout: `session_meta` and `token_count` events, no `turn_context`, so
    no model named anywhere (compact JSON, `type` before `payload`, as Codex writes it)."""
    lines: list[dict[str, object]] = [{
        "timestamp": "2025-11-01T01:02:58.871Z", "type": "session_meta",
        "payload": {"id": "c0de0034-0000-4000-8000-000000000001", "timestamp": "2025-11-01T01:02:58.864Z",
                    "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.34.0", "instructions": None},
    }]  # fmt: skip
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0}
    for k, (inp, cached, out, reasoning) in enumerate(((9000, 0, 400, 128), (9800, 8960, 250, 0))):
        last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": reasoning, "total_tokens": inp + out}  # fmt: skip
        total = {key: total[key] + int(last[key]) for key in total}
        summed = {**total, "total_tokens": total["input_tokens"] + total["output_tokens"]}
        info = {"total_token_usage": summed, "last_token_usage": last, "model_context_window": 272000}
        lines.append({"timestamp": f"2025-11-01T01:03:{10 + k}.000Z", "type": "event_msg",
                      "payload": {"type": "token_count", "info": info}})  # fmt: skip
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in lines), encoding="utf-8")
    return path


def lay_out(kind: str, sources: list[Path], dest: Path) -> Path:
    """Copy logs into `dest` the way ccusage's `kind` sub-command looks for them; returns the folder
    to name in LAYOUT[kind]'s variable. Codex: `.../sessions/...` and `.../archived_sessions/...`
    keep their path from there; Gemini CLI: `.../tmp/<hash>/chats/...` from `tmp`; opencode: a
    store (`opencode.db`, or a `storage` folder) as is."""
    import shutil

    home = dest / {"codex": ".codex", "gemini": ".gemini", "opencode": "opencode"}[kind]
    for src in sources:
        files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
        if kind == "opencode":
            target = home / ("storage" if src.is_dir() else "opencode.db")
            if src.is_dir():
                shutil.copytree(src, target, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)
            continue
        anchors = ("sessions", "archived_sessions") if kind == "codex" else ("tmp",)
        for f in files:
            parts = f.parts
            at = max((i for i, p in enumerate(parts) if p in anchors), default=-1)
            if at < 0:
                raise SystemExit(f"{f}: not under a folder named {' or '.join(anchors)}")
            out = home.joinpath(*parts[at:])
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, out)
    return home


def compare(ccusage: dict[str, Any], rows: list[dict[str, Any]], key: str) -> dict[str, int]:
    """Sessions of `ccusage --json` and of `billed --json` matched by `key(row)` (its sessionFile /
    sessionId), the billed figures read as ccusage's (its `versus: "ccusage"` notes applied):
    how many match, agree on every token field, and on cost (to 1e-6)."""
    fields = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens", "totalTokens")
    theirs = {s.get("sessionFile") or s["sessionId"]: s for s in ccusage["sessions"]}
    ours: dict[str, dict[str, Any]] = {}
    for row in rows:
        got = {f: row[f] for f in fields} | {"cost": row["totalCost"]}
        for note in row["readingNotes"]:
            if note.get("versus") == "ccusage":
                got |= {f: v["ccusage"] for f, v in note["figures"].items()}
        k = key(row)
        if k in ours and ours[k]["cost"] is not None and got["cost"] is not None:
            got["cost"] += ours[k]["cost"]  # a session's files: their note gave its token sums
        ours[k] = got
    both = sorted(set(theirs) & set(ours))
    tokens = [k for k in both if all(ours[k][f] == theirs[k][f] for f in fields)]
    costs = [
        k for k in both
        if ours[k]["cost"] is not None
        and abs(ours[k]["cost"] - theirs[k].get("costUSD", theirs[k].get("totalCost"))) <= 1e-6
    ]  # fmt: skip
    return {"ccusage": len(theirs), "billed": len(ours), "matched": len(both), "tokens": len(tokens),
            "cost": len(costs)}  # fmt: skip


def main(argv: list[str]) -> int:
    """`python -m tests.bench.ccusage_layout KIND DEST SRC...`: lay out, print the folder."""
    print(lay_out(argv[0], [Path(a) for a in argv[2:]], Path(argv[1])))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
