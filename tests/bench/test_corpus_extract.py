"""bench/corpus/extract.py on a tiny repository made here: a session under a hidden folder
(`.codex/sessions/...`, as users commit their `~/.codex`) is written where `fidelity --all-real`
and `billed DIR` find it (`dot-codex/...`), and a wrong sha256 is a problem, exit 1."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxbench.bench.corpus.extract import main, visible

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

PATH = ".codex/sessions/2025/10/06/rollout-x.jsonl"
STORAGE = Path(__file__).resolve().parents[1] / "traces/importers/data/opencode-storage"
DATA = b'{"type":"session_meta","payload":{}}\n'


def _repo(root: Path) -> str:
    work = root / "work"
    (work / PATH).parent.mkdir(parents=True)
    (work / PATH).write_bytes(DATA)
    shutil.copytree(STORAGE, work / ".local/share/opencode/storage")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(root),
        "PATH": "/usr/bin:/bin",
    }
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "s"]):
        subprocess.run(["git", *cmd], cwd=work, env=env, check=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(root / "mirror" / "o+n" / "repo")], check=True
    )
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
    ).stdout.strip()


def test_visible() -> None:
    assert visible(".claude/projects/-Users-a/x.jsonl") == "dot-claude/projects/-Users-a/x.jsonl"
    assert visible("tests/.hidden/.x.jsonl") == "tests/dot-hidden/dot-x.jsonl"
    assert visible("a/b.jsonl") == "a/b.jsonl"


@pytest.mark.parametrize("good", [True, False])
def test_extract_hidden_folder(tmp_path: Path, good: bool) -> None:
    commit = _repo(tmp_path)
    digest = hashlib.sha256(DATA).hexdigest() if good else "0" * 64
    table = tmp_path / "s.csv"
    table.write_text(
        "repo,path,commit,format,model,requests,licence,split,sha256\n"
        f"o/n,{PATH},{commit},codex,gpt-5,1,none,test,{digest}\n"
    )
    out = tmp_path / "out"
    rc = main(["--csv", str(table), "--mirror-root", str(tmp_path / "mirror"), "--out", str(out)])
    dest = out / "test" / "o__n" / "dot-codex/sessions/2025/10/06/rollout-x.jsonl"
    assert (rc, dest.exists()) == ((0, True) if good else (1, False))
    if good:
        assert dest.read_bytes() == DATA


RESERVED = (  # the independent check's repositories (issues 28 and 33): never in the corpus
    "Jason-liu-0219/my-claude",
    "Eduardodmb/",
    "SWORDIntel/claude-backups",
    "austinweitao/claude-backup",
    "MoonLadderStudios/MoonMind",
    "Mai0313/VibeCodingTracker",
    "wingorithm/Vibe-Coding-Comparison-Project",
    "fabien-lessirard/dotfiles",
    "Kocoro-lab/Shannon",
    "Xu-Wentao/dotfile",
    "blubber/dotfiles",
    "CoreGems/Cline-Xray",
    "Jeehunter/mcp-vscode-server",
    "marot/spotter",
    "daaain/claude-code-log",
    "trycua/cua",
)
SHARED_DEV = {"chiphuyen/sniffly"}  # a session of it is in the shared development folder
MOVED = {"jwp23/dotfiles": "test"}  # the README's move: opencode had no test part (tie at 9.5 from half)


def test_sessions_csv_rows() -> None:
    """The committed pointers: one row per (repo, path), the hash split (bar SHARED_DEV and MOVED), a known
    format, a sha256, billed requests on every main file, 0 on a Claude Code sub-agent file exactly
    when its session file is a row (`billed` counts it there; without it, the sub-agent file is a
    session of its own), no reserved repository, and both parts for the families of issue 33."""
    from ctxbench.bench.corpus.extract import rows, split_of

    table = rows()
    keys = {(r["repo"], r["path"]) for r in table}
    assert len(keys) == len(table)
    parts: dict[str, set[str]] = {}
    for r in table:
        where = f"{r['repo']}:{r['path']}"
        want = "dev" if r["repo"] in SHARED_DEV else MOVED.get(r["repo"], split_of(r["repo"]))
        assert r["split"] == want, where
        assert r["format"] in {"claude-code", "codex", "gemini-cli", "opencode", "cline-task"}, where
        assert len(r["sha256"]) == 64 and int(r["sha256"], 16) >= 0, where
        assert not any(r["repo"] == x or (x.endswith("/") and r["repo"].startswith(x)) for x in RESERVED)
        assert r["licence"], where
        if "/subagents/" in r["path"]:
            main = r["path"].split("/subagents/")[0] + ".jsonl"
            assert (r["requests"] == "0") == ((r["repo"], main) in keys), where
        else:
            assert int(r["requests"]) > 0, where
        parts.setdefault(r["format"], set()).add(r["split"])
    for family in ("claude-code", "codex", "gemini-cli"):
        assert parts[family] == {"dev", "test"}, family


def test_extract_opencode_storage_session(tmp_path: Path) -> None:
    """A row on an opencode storage session file brings its messages and parts along (a sub-agent's
    session is a row of its own), checked against the digest of their listing."""
    from ctxbench.bench.corpus.extract import storage_digest
    from ctxbench.traces.importers import import_paths

    commit = _repo(tmp_path)
    root = ".local/share/opencode/storage"
    rows = []
    for sid in ("ses_0a0000000ffeSyntheticMain01", "ses_0a0000100ffeSyntheticSub001"):
        session = STORAGE / "session/global" / f"{sid}.json"
        files = [session, *sorted((STORAGE / "message" / sid).iterdir())]
        files += [p for m in files[1:] for p in sorted((STORAGE / "part" / m.stem).iterdir())]
        blobs = {f"{root}/{f.relative_to(STORAGE).as_posix()}": f.read_bytes() for f in files}
        digest = storage_digest(root, blobs)
        rows.append(
            f"o/n,{root}/session/global/{sid}.json,{commit},opencode,claude-sonnet-4-5,1,none,dev,{digest}"
        )
    table = tmp_path / "s.csv"
    table.write_text("repo,path,commit,format,model,requests,licence,split,sha256\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out"
    assert main(["--csv", str(table), "--mirror-root", str(tmp_path / "mirror"), "--out", str(out)]) == 0
    got = out / "dev/o__n/dot-local/share/opencode/storage"
    assert sorted(p.relative_to(got) for p in got.rglob("*.json")) == sorted(
        p.relative_to(STORAGE) for p in STORAGE.rglob("*.json") if "project" not in p.parts
    )
    res = import_paths([got / "session/global/ses_0a0000000ffeSyntheticMain01.json"])
    assert res.names == ["main", "agent-synthetic-sub/main"]
    table.write_text(table.read_text().replace(rows[0][-64:], "0" * 64))
    assert main(["--csv", str(table), "--mirror-root", str(tmp_path / "mirror"), "--out", str(out)]) == 1
