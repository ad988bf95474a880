"""Re-extract every session file listed in bench/corpus/sessions.csv from its public GitHub
repository (stdlib only; `python -m ctxbench.bench.corpus.extract --out DIR`).

For each row the blob COMMIT:PATH is read from a bare git directory under `--mirror-root`
(`<root>/<owner>+<name>/repo` or `<root>/<owner>+<name>`), or else from a blobless clone of
https://github.com/OWNER/NAME kept in `--cache`; it is written to
`OUT/<split>/<owner>__<name>/<path>` (sub-folders kept, so a Claude Code session's
`<uuid>/subagents/agent-*.jsonl` stay beside it; a folder whose name starts with a dot, such as
`.codex` or `.claude`, is written as `dot-codex`, `dot-claude`, since the log discovery of
`fidelity --all-real` and `billed DIR` skips hidden folders) and checked against the row's sha256.
`ctxbench fidelity --all-real --corpus OUT` then reads the split it is given.

A row whose path is a session of opencode's file storage (`.../storage/session/<project>/<id>.json`,
traces/importers/opencode_storage.py) stands for that session's files: the session file, its
`message/<id>/*.json` and each message's `part/<message>/*.json`, all written; its sha256 is that of
the listing `<sha256 of the file>  <path under the storage folder>\n`, one line per file in the
order of their paths (`storage_digest`). A sub-agent's session is a row of its own.

Exit status: 0 all files written, 1 a file missing or with another sha256, 2 bad input."""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import subprocess
import sys
from pathlib import Path

CSV = Path(__file__).resolve().parent / "sessions.csv"
COLUMNS = ("repo", "path", "commit", "format", "model", "requests", "licence", "split", "sha256")
SPLITS = ("dev", "test")


class CorpusError(ValueError):
    """A row of sessions.csv that cannot be read (file, line, field named)."""


def rows(path: Path = CSV) -> list[dict[str, str]]:
    """The rows of `path`, each checked: every column present, split dev/test, commit 40 hex."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CorpusError(f"{path}:1: missing column(s) {', '.join(missing)}")
        out = []
        for line, r in enumerate(reader, start=2):
            if r["split"] not in SPLITS:
                raise CorpusError(f"{path}:{line}: field split: {r['split']!r} is not dev or test")
            if len(r["commit"]) != 40 or any(ch not in "0123456789abcdef" for ch in r["commit"]):
                raise CorpusError(f"{path}:{line}: field commit: {r['commit']!r} is not 40 hex digits")
            if "/" not in r["repo"]:
                raise CorpusError(f"{path}:{line}: field repo: {r['repo']!r} is not owner/name")
            out.append(dict(r))
    return out


def split_of(repo: str) -> str:
    """The split rule before overrides (README.md): test when sha256("owner/name") is odd."""
    return "test" if int(hashlib.sha256(repo.encode()).hexdigest(), 16) % 2 else "dev"


def visible(path: str) -> str:
    """`path` with each leading dot of a folder or file name spelled `dot-` (README.md)."""
    return "/".join("dot-" + c[1:] if c.startswith(".") else c for c in path.split("/"))


STORAGE_SESSION = re.compile(r"^(?P<root>(?:.*/)?storage)/session/[^/]+/(?P<id>[^/]+)\.json$")


def storage_files(gd: Path, commit: str, path: str) -> list[str] | None:
    """The files an opencode storage session row stands for (its session file first), or None
    when `path` is no storage session file."""
    m = STORAGE_SESSION.match(path)
    if m is None:
        return None
    root, sid = m["root"], m["id"]
    listed = subprocess.run(
        ["git", "--git-dir", str(gd), "ls-tree", "-r", "--name-only", "-z", commit, "--",
         f"{root}/message/{sid}/", f"{root}/part/"],
        capture_output=True,
    )  # fmt: skip
    names = listed.stdout.decode("utf-8", "replace").split("\0") if listed.returncode == 0 else []
    messages = sorted(n for n in names if n.startswith(f"{root}/message/{sid}/") and n.endswith(".json"))
    ids = {n.rsplit("/", 1)[1][: -len(".json")] for n in messages}
    parts = sorted(
        n for n in names if n.startswith(f"{root}/part/") and n.endswith(".json") and n.split("/")[-2] in ids
    )
    return [path, *messages, *parts]


def storage_digest(root: str, blobs: dict[str, bytes]) -> str:
    """The sha256 of a storage session row: of `<sha256>  <path under root>` lines in path order."""
    lines = (f"{hashlib.sha256(blobs[n]).hexdigest()}  {n[len(root) + 1 :]}\n" for n in sorted(blobs))
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def read_blobs(gd: Path, commit: str, paths: list[str]) -> tuple[dict[str, bytes], list[str]]:
    """The blobs COMMIT:PATH of `paths` (one `git cat-file --batch`), and the paths missing."""
    query = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = subprocess.run(
        ["git", "--git-dir", str(gd), "cat-file", "--batch"], input=query, capture_output=True
    )
    data, at = out.stdout, 0
    blobs: dict[str, bytes] = {}
    missing: list[str] = []
    for k, p in enumerate(paths):
        end = data.find(b"\n", at)
        if end < 0:  # git said nothing more (no such repository or commit)
            return blobs, missing + paths[k:]
        head = data[at:end].split()
        if len(head) != 3 or head[1] != b"blob":
            missing.append(p)
            at = end + 1
            continue
        size = int(head[2])
        blobs[p] = data[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return blobs, missing


def git_dir(repo: str, mirror_root: Path | None, cache: Path) -> Path:
    owner, name = repo.split("/", 1)
    if mirror_root is not None:
        for cand in (mirror_root / f"{owner}+{name}" / "repo", mirror_root / f"{owner}+{name}"):
            if (cand / "HEAD").exists() or (cand / "objects").exists():
                return cand
    d = cache / f"{owner}__{name}.git"
    if not d.exists():
        d.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://github.com/{owner}/{name}"
        subprocess.run(["git", "clone", "--bare", "--filter=blob:none", "--quiet", url, str(d)], check=True)
    return d


def extract(
    table: list[dict[str, str]], out: Path, mirror_root: Path | None, cache: Path, split: str | None
) -> tuple[int, list[str]]:
    """Write every row of `split` (all when None) under `out`: (files written, problems)."""
    n, problems = 0, []
    for r in table:
        if split and r["split"] != split:
            continue
        where = f"{r['repo']}@{r['commit'][:12]}:{r['path']}"
        try:
            gd = git_dir(r["repo"], mirror_root, cache)
        except (OSError, subprocess.CalledProcessError) as e:
            problems.append(f"{where}: cannot clone: {e}")
            continue
        paths = storage_files(gd, r["commit"], r["path"]) or [r["path"]]
        blobs, missing = read_blobs(gd, r["commit"], paths)
        if missing:
            problems.append(f"{where}: missing: {', '.join(missing[:3])}")
            continue
        m = STORAGE_SESSION.match(r["path"])
        digest = storage_digest(m["root"], blobs) if m else hashlib.sha256(blobs[r["path"]]).hexdigest()
        if r["sha256"] and digest != r["sha256"]:
            problems.append(f"{where}: sha256 {digest} is not the recorded {r['sha256']}")
            continue
        owner, name = r["repo"].split("/", 1)
        for path, blob in blobs.items():
            dest = out / r["split"] / f"{owner}__{name}" / visible(path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blob)
        n += 1
    return n, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ctxbench.bench.corpus.extract", description=__doc__)
    ap.add_argument("--csv", type=Path, default=CSV, help="the pointers (default: bench/corpus/sessions.csv)")
    ap.add_argument("--mirror-root", type=Path, help="folder of fetched bare git dirs (<owner>+<name>)")
    ap.add_argument("--cache", type=Path, default=Path(".git-cache"), help="where blobless clones go")
    ap.add_argument("--out", type=Path, default=Path("corpus-data"), help="where the files go")
    ap.add_argument("--split", choices=SPLITS, help="only this part (default: both)")
    a = ap.parse_args(argv)
    try:
        table = rows(a.csv)
    except (OSError, CorpusError) as e:
        print(f"extract: error: {e}", file=sys.stderr)
        return 2
    n, problems = extract(table, a.out, a.mirror_root, a.cache, a.split)
    for p in problems:
        print(f"extract: {p}", file=sys.stderr)
    print(f"extracted {n} file(s) to {a.out}, {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
