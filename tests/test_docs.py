"""Every shell command README.md and the guide (docs/*.md) show runs, offline, as shown.

A command is each line of a fenced ```sh block (a trailing `\\` continues it) and any other line
that starts with `ctxbench ` or `python -m ctxbench`. Each page's commands run in order in a
temporary folder of their own, where `traces/`, `bench/` and `tests/` are the checkout's (so the
paths the pages use resolve, and files a command writes, such as `game.jsonl` or `sweep.csv`,
land in the temporary folder for the next command). `ctxbench …` runs in process through the CLI's
`main` (the same parser and handlers as the console script, without a new interpreter per
command); `python -m ctxbench…` runs as a subprocess. Each must exit 0 (or the status listed in
EXPECTED). Commands that need the network, a live harness, a long-running server or an install
are listed in SKIPPED with the reason, and a test checks that list against the pages, so it
cannot go stale. The figures the pages quote are checked by tests/bench/test_readme_figures.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINKED = ("traces", "bench", "tests")  # checkout folders the commands name, linked into the temp dir

INSTALL = "installs into a venv: tests/test_install.py and CI (.ci/run) run the install"
NPM = "/tmp/ctxnpm"
QUICK = "traces/samples/game-300.jsonl --policy h-openrouter --policy h-direct --policy h-keep-last-2"
SKIPPED: dict[str, str] = {
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e .": INSTALL,
    f"python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/ctxbench compare {QUICK}": (
        INSTALL + "; its compare is the README's first command, run here"
    ),
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[all]' && .venv/bin/python -m pytest": (
        INSTALL + "; it runs this very suite"
    ),
    "ctxbench serve --task bench/live/claude_code_task.yaml --record reports/runs/cc": (
        "a server that runs until stopped (tests/serve/ start it on a free port)"
    ),
    "CCUSAGE=$(which ccusage) python -m pytest bench/speed/test_bench_billed.py --benchmark-enable -s "
    "-p no:cacheprovider": (
        "needs ccusage from npm, and times whole processes for a minute (the benchmark suite, not a test)"
    ),
    "ctxbench proxy --upstream https://api.anthropic.com --record reports/runs/mine": (
        "needs the network and an API key"
    ),
    f"npm install --prefix {NPM} @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 "
    "opencode-ai@1.18.33 @google/gemini-cli@0.61.0": "needs the network (npm registry)",
    f"python -m ctxbench.bench.live.run_harness claude-code --prefix {NPM} "
    "--out reports/live/claude-code": "needs Claude Code from npm; minutes long (its live tests run it)",
    f"python -m ctxbench.bench.live.session_logs gemini-cli --prefix {NPM} "
    "--out reports/live/gemini-cli": "needs Gemini CLI from npm; minutes long (its live tests run it)",
    f"npm install --prefix {NPM} --ignore-scripts cline@2.18.0": "needs the network (npm registry)",
    f"python -m ctxbench.bench.live.session_logs cline --prefix {NPM} --out reports/live/cline": (
        "needs Cline from npm (its live test runs it)"
    ),
    "python -m ctxbench.bench.render report/index.html report.png": (
        "needs headless Chromium (tests/bench/test_honest_report.py renders the report where it is)"
    ),
    "ctxbench speed --preset h-direct --trace game-60 --rounds 1 --json": (
        "a benchmark: it spends CPU-seconds by design (tests/bench/test_throughput.py runs `speed --json`)"
    ),
}
EXPECTED: dict[str, int] = {}  # command -> the exit status its page documents, when not 0


def _logical_lines(block: list[str]) -> list[str]:
    out: list[str] = []
    pending = ""
    for raw in block:
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        out.append((pending + line.strip()).strip())
        pending = ""
    return out


def _strip_comment(line: str) -> str:
    """The command without a trailing `# comment` (a `#` at the start or after whitespace, outside
    quotes), as a shell reads it."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip()
    return line.strip()


def _is_command(line: str) -> bool:
    """A line outside a shell block that is a command: `ctxbench VERB …` or `python -m ctxbench…`
    (prose that happens to start with the word ctxbench is not)."""
    from ctxbench.bench.cli import VERBS

    words = line.split()
    if line.startswith("python -m ctxbench"):
        return True
    return len(words) > 1 and words[0] == "ctxbench" and words[1] in {v.name for v in VERBS}


def commands(text: str) -> list[str]:
    """The commands of one page, in order (module docstring)."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^\s*```(\S*)", lines[i])
        if fence:
            lang = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            body = lines[i + 1 : j]
            if lang in ("sh", "bash", "shell", "console"):
                out.extend(c for c in (_strip_comment(x) for x in _logical_lines(body)) if c)
            else:
                out.extend(_strip_comment(x) for x in body if _is_command(x))
            i = j + 1
            continue
        if _is_command(lines[i]):
            out.append(_strip_comment(lines[i]))
        i += 1
    return out


def _run_ctxbench(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    from ctxbench.bench.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse: --help, or a usage error
                code = e.code if isinstance(e.code, int) else 2
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, (out.getvalue()[-1500:] + err.getvalue()[-1500:])


def run_command(cmd: str, cwd: Path) -> tuple[int, str]:
    words = shlex.split(cmd)
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    if words[:1] == ["ctxbench"]:
        return _run_ctxbench(words[1:], env)
    if words[:2] == ["python", "-m"]:
        got = subprocess.run(
            [sys.executable, *words[1:]], cwd=cwd, env={**os.environ, **env}, capture_output=True,
            text=True, timeout=120, check=False,
        )  # fmt: skip
        return got.returncode, got.stdout[-1500:] + got.stderr[-1500:]
    raise AssertionError(f"{cmd!r}: not a ctxbench command and not in SKIPPED: run it or say why not")


def _page_id(p: Path) -> str:
    return str(p.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_command_a_page_shows_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(tmp_path / ".cache"))  # no writes outside tmp_path
    failed = []
    for cmd in commands(page.read_text(encoding="utf-8")):
        if cmd in SKIPPED:
            continue
        started = time.perf_counter()
        code, output = run_command(cmd, tmp_path)
        if os.environ.get("CTXBENCH_DOCS_TIMES"):
            print(f"{time.perf_counter() - started:6.1f} s  {cmd}", file=sys.__stderr__)
        if code != EXPECTED.get(cmd, 0):
            failed.append(f"{cmd}\n  exit {code}, expected {EXPECTED.get(cmd, 0)}\n{output}")
    assert not failed, "\n\n".join(failed)


def test_the_skipped_commands_are_still_shown_and_nothing_else_is_skipped() -> None:
    shown = {c for p in PAGES for c in commands(p.read_text(encoding="utf-8"))}
    assert set(SKIPPED) <= shown, sorted(set(SKIPPED) - shown)
    assert {"ctxbench compare traces/samples/game-300.jsonl --policy h-openrouter --policy h-direct "
            "--policy h-keep-last-2"} <= shown  # fmt: skip
    assert len(shown - set(SKIPPED)) >= 30  # most of what the pages show is run


def test_commands_are_extracted_as_a_shell_reads_them() -> None:
    text = (
        "intro\n```sh\nctxbench run a.jsonl --policy x   # a comment\nctxbench sweep t \\\n"
        "    --budgets 1k:2k:1k -o r.csv\n# a comment line\n```\n"
        "```\n1 trace(s)\nctxbench presets --json\nctxbench is not a verb\n"
        "```\nctxbench presets\nctxbench answers one question\n"
    )
    assert commands(text) == [
        "ctxbench run a.jsonl --policy x",
        "ctxbench sweep t --budgets 1k:2k:1k -o r.csv",
        "ctxbench presets --json",
        "ctxbench presets",
    ]


def test_a_failing_command_fails_the_check(tmp_path: Path) -> None:
    code, output = run_command("ctxbench run no-such-trace.jsonl --policy h-direct", tmp_path)
    assert code == 2 and "no-such-trace.jsonl" in output


def test_the_pages_are_what_a_user_has() -> None:
    """A quickstart README; a guide of the pages it links; nothing a user of the checkout lacks."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    names = {p.name for p in PAGES[1:]}
    assert {"index.md", "concepts.md", "running-and-comparing.md", "real-logs.md", "serving.md", "presets.md",
            "providers.md", "ci-guard.md", "python-api.md", "faq.md", "architecture.md"} <= names  # fmt: skip
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for bad in ("SPEC.md", "research/", "../shared", "DESIGN.md", "traces-real/"):
            assert bad not in text, f"{_page_id(page)} names {bad}, which a user does not have"
        issue = re.search(r"\bissue #?\d+", text, re.I)
        assert not issue, f"{_page_id(page)} cites an issue number: {issue.group()}"
        for link in re.findall(r"\]\((?!https?://|#)([^)#]+)", text):
            assert (page.parent / link).exists(), f"{_page_id(page)} links {link}, which does not exist"


def test_the_tour_writes_nothing_in_the_checkouts_root() -> None:
    """Issue 31 #9: every file a README or guide command writes goes under `reports/` (git-ignored),
    so following the tour leaves the checkout clean."""
    import re as _re

    outside = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in page.read_text(encoding="utf-8").splitlines():
            if not line.startswith(("ctxbench ", "python -m ctxbench")):
                continue
            for m in _re.finditer(r"(?:-o|--records|--write-baseline|--record|--out)\s+(\S+)", line):
                if m.group(1) != "-" and not m.group(1).startswith(("reports/", "/tmp/", "$")):
                    outside.append(f"{page.name}: {line}")
    assert not outside, "\n".join(outside)
