"""A restarted CLI's system prompt tail, found in the bill (traces/importers/system_tail.py): Claude
Code marks its identity line and the rest of the system prompt (ending in the git status the process
read at start) apart; a new prompt whose read is exactly the identity block's end, below the system
end read before, starts a process with a new tail, whose end a later read shows."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.bench.fidelity.causes import system_at
from ctxbench.policies.preset import load_policy
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import SystemEvent

HEAD = 3000  # tools + the identity block: the same for every process
END1 = 4000  # the first process's system end (its git status)
END2 = 4050  # the restarted process's (a longer git status)


def _session(tmp_path: Path, restart_read: int) -> Path:
    n = 0

    def line(**kw: object) -> str:
        nonlocal n
        n += 1
        t = f"2026-04-01T00:{n // 60:02d}:{n % 60:02d}Z"
        return json.dumps({"sessionId": "s", "uuid": f"l{n}", "timestamp": t, "version": "2.0.5", **kw})

    def prompt(text: str) -> str:
        return line(type="user", message={"role": "user", "content": text})

    def reply(rid: str, read: int, write: int) -> str:
        usage = {"input_tokens": 1, "cache_read_input_tokens": read, "cache_creation_input_tokens": write}
        msg = {
            "id": rid,
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
            "role": "assistant",
        }
        return line(type="assistant", requestId=rid, message=msg)

    lines = [
        prompt("look at @a.txt"), reply("r0", 0, END1 + 1000),  # C = 5000, the file most of it
        prompt("next"), reply("r1", END1, 200),  # the file dropped: falls back to the system end
        prompt("more"), reply("r2", END1 + 200, 100),  # C = 4300, read in full
        # the CLI restarted (new git status): only the identity block's entry fits; C = 5000
        prompt("restarted, see @b.txt"), reply("r3", restart_read, 5000 - restart_read),
        prompt("thanks"), reply("r4", END2, 450),  # b.txt dropped: the new system end, C = 4500
        prompt("more"), reply("r5", 4500, 100),  # read in full
    ]  # fmt: skip
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_restart_gets_its_own_tail_sized_from_the_bill(tmp_path: Path) -> None:
    res = import_paths([_session(tmp_path, HEAD)])
    meta = res.main.header.meta
    assert (meta["system_tokens"], meta["system_head"], meta["system_restarts"]) == (END1, HEAD, [[3, END2]])
    systems = [e for e in res.main.events if isinstance(e, SystemEvent)]
    assert len(systems) == 2
    first, second = ([c.tokens for c in s.content] for s in systems)
    assert first == [HEAD, END1 - HEAD] and second == [HEAD, END2 - HEAD]
    assert systems[0].content[0].key == systems[1].content[0].key  # the identity block is shared
    assert systems[0].content[1].key != systems[1].content[1].key  # the tail is the process's own
    assert [system_at(meta, i) for i in (0, 2, 3, 5)] == [END1, END1, END2, END2]


def test_replay_reads_the_identity_block_then_the_new_system_end(tmp_path: Path) -> None:
    res = import_paths([_session(tmp_path, HEAD)])
    recs = run_prepared([prepare_for(res.main)], load_policy("recorded"), "anthropic", 0).records
    assert [r.cache_read for r in recs] == [0, END1, END1 + 200, HEAD, END2, 4500]
    assert recs[3].miss_cause == "system_change"


def test_no_restart_without_a_read_at_the_identity_block(tmp_path: Path) -> None:
    """A read pinned at the system end (a server-side lookup failure's signature) is no restart."""
    res = import_paths([_session(tmp_path, END1)])
    assert "system_restarts" not in res.main.header.meta
    assert [e for e in res.main.events if isinstance(e, SystemEvent)][1:] == []
