"""`ctxbench fidelity --all-real`: an error raised on the data of one conversation's replay (or of one
log's import) names that conversation as not replayed, in the text, `--json` and the report, and
the rest of the folder is scored, exit 0 (issue 28: nothing dropped or stopped silently); a bug
(an exception outside bench/fidelity/logs.py DATA_ERRORS) still ends the run as an internal error;
a single trace's replay error is one line naming the file, exit 2."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.fidelity import logs
from ctxbench.traces.model import MessageEvent, Trace
from tests.traces.importers.claude_code_lines import turn, write_log

ROLLOUT = Path(__file__).parents[2] / "traces" / "importers" / "data" / "codex-0.171.0.rollout.jsonl.xz"
NEGATIVE = "Negative delay -5.0"  # what simpy raises for a timeout scheduled in the past


def _log(path: Path) -> Path:
    """A Claude Code session of 4 requests, each reading the previous prompt; its request ids carry
    the file's stem (`req_<stem><k>`), which the failing replay below looks for."""
    lines: list[dict[str, Any]] = []
    prev = 0
    for k in range(4):
        prompt = 10_000 + 1_500 * k
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": prev,
            "cache_creation_input_tokens": prompt - prev - 3,
            "output_tokens": 100,
        }
        lines += turn(
            k, "claude-opus-4-7", usage, asked=f"2026-05-01T08:0{k}:00Z", answered=f"2026-05-01T08:0{k}:05Z",
            message_id=f"m{path.stem}{k}", request_id=f"req_{path.stem}{k}",
        )  # fmt: skip
        prev = prompt - 3
    return write_log(path, lines)


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "proj").mkdir(parents=True)
    _log(root / "proj" / "good.jsonl")
    _log(root / "proj" / "bad.jsonl")
    return root


def _of(trace: Trace, stem: str) -> bool:
    return any(
        isinstance(e, MessageEvent) and (e.request_id or "").startswith(f"req_{stem}") for e in trace.events
    )


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay of bad.jsonl's conversation raises simpy's ValueError; every other one runs."""
    real = logs.compare

    def compare(trace: Trace, *args: Any, **kwargs: Any) -> Any:
        if _of(trace, "bad"):
            raise ValueError(NEGATIVE)
        return real(trace, *args, **kwargs)

    monkeypatch.setattr(logs, "compare", compare)


@pytest.mark.usefixtures("failing")
def test_one_conversation_that_raises_is_named_and_the_rest_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path)
    assert main(["fidelity", "--all-real", str(root), "--json", "-q"]) == 0
    docs = {d["session"]: d for d in json.loads(capsys.readouterr().out)}
    assert set(docs) == {"proj/good main", "proj/bad main"}
    good, bad = docs["proj/good main"], docs["proj/bad main"]
    assert good["requests"] == 4 and good["within_tolerance"] is not None and "error" not in good
    assert bad["within_tolerance"] is None and bad["log"] == "proj/bad.jsonl"
    assert bad["error"] == {"class": "ValueError", "message": NEGATIVE, "stage": "replay"}
    assert bad["not_scored"] == {
        "count": 4,
        "requests": [0, 1, 2, 3],
        "why": f"not replayed: ValueError: {NEGATIVE}",
    }

    assert main(["fidelity", "--all-real", str(root), "-q"]) == 0  # the report on stdout
    out, err = capsys.readouterr()
    assert f"| proj/bad.jsonl | main | 4 | ValueError | {NEGATIVE} |" in out
    assert "| proj/good main | claude-opus-4-7 | 4 |" in out  # scored in the targets table
    assert "bad main (claude-opus-4-7)" not in out  # not also listed as "not compared"
    assert f"bad.jsonl main: not replayed: ValueError: {NEGATIVE}" in err
    assert "1 conversation(s) not replayed" in err and "Traceback" not in err

    report = tmp_path / "report.md"
    assert main(["fidelity", "--all-real", str(root), "-q", "-o", str(report)]) == 0
    text = report.read_text()
    section = text.split("## Not replayed", 1)[1].split("\n## ", 1)[0]
    assert f"| proj/bad.jsonl | main | 4 | ValueError | {NEGATIVE} |" in section
    assert "good" not in section


def test_a_log_that_fails_to_import_is_named_and_the_rest_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path)
    real = logs.import_paths

    def import_paths(paths: list[Path], fmt: str | None = None) -> Any:
        if paths[0].name == "bad.jsonl":
            raise KeyError("proj/bad.jsonl line 3: field 'message' missing")
        return real(paths, fmt)

    monkeypatch.setattr(logs, "import_paths", import_paths)
    assert main(["fidelity", "--all-real", str(root), "--json", "-q"]) == 0
    docs = {d["session"]: d for d in json.loads(capsys.readouterr().out)}
    assert docs["proj/good main"]["requests"] == 4
    bad = docs[f"proj/bad {logs.IMPORT}"]
    assert bad["error"]["class"] == "KeyError" and bad["error"]["stage"] == "import"
    assert bad["note"] == "not imported: KeyError: proj/bad.jsonl line 3: field 'message' missing"
    report = tmp_path / "r.md"
    assert main(["fidelity", "--all-real", str(root), "-q", "-o", str(report)]) == 0
    assert "| proj/bad.jsonl | (import) | — | KeyError | proj/bad.jsonl line 3" in report.read_text()
    assert bad["per_request_usage"] is None and "not_scored" not in bad
    assert f"{root / 'proj' / 'bad.jsonl'}: not imported: KeyError: proj/bad.jsonl" in capsys.readouterr().err


@pytest.mark.usefixtures("failing")
def test_the_corpus_parts_name_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--all-real --corpus DIR`: the part holding the failing log names it in its "Not replayed"
    list and in `--json`; the other part is scored."""
    corpus = tmp_path / "corpus"
    (corpus / "test").mkdir(parents=True)
    (corpus / "dev").mkdir()
    _log(corpus / "test" / "bad.jsonl")
    _log(corpus / "dev" / "good.jsonl")
    none = str(tmp_path / "no-shared")  # no shared folder: the dev part is the corpus's dev/ rows
    assert main(["fidelity", "--all-real", none, "--corpus", str(corpus), "--json", "-q"]) == 0
    docs = {(d["part"], d["log"]): d for d in json.loads(capsys.readouterr().out)}
    assert docs["test", "bad.jsonl"]["error"]["message"] == NEGATIVE
    assert docs["dev", "good.jsonl"]["within_tolerance"] is not None
    report = tmp_path / "r.md"
    assert main(["fidelity", "--all-real", none, "--corpus", str(corpus), "-q", "-o", str(report)]) == 0
    test_part, dev_part = report.read_text().split("## dev part", 1)
    assert f"| bad.jsonl | main | 4 | ValueError | {NEGATIVE} |" in test_part.split("### Not replayed")[1]
    assert "Not replayed" not in dev_part and "| good.jsonl | main | claude-code |" in dev_part
    assert "1 conversation(s) not replayed" in capsys.readouterr().err


def test_another_format_that_raises_has_a_row_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Codex rollout whose replay raises ZeroDivisionError: its row in "Other formats" and the
    "Not replayed" section name it; the Claude Code session beside it is scored."""
    root = tmp_path / "logs"
    root.mkdir()
    _log(root / "good.jsonl")
    (root / "rollout-x.jsonl").write_bytes(lzma.decompress(ROLLOUT.read_bytes()))
    real = logs.compare

    def compare(trace: Trace, *args: Any, **kwargs: Any) -> Any:
        if not _of(trace, "good"):
            raise ZeroDivisionError("float division by zero")
        return real(trace, *args, **kwargs)

    monkeypatch.setattr(logs, "compare", compare)
    report = tmp_path / "r.md"
    assert main(["fidelity", "--all-real", str(root), "-q", "-o", str(report)]) == 0
    text = report.read_text()
    assert (
        "| rollout-x.jsonl | main |" in text
        and "not replayed: ZeroDivisionError (section Not replayed)" in text
    )
    assert "| rollout-x.jsonl | main | " in text.split("## Not replayed", 1)[1]
    assert "| good main | claude-opus-4-7 | 4 |" in text
    capsys.readouterr()


def test_a_bug_is_not_taken_for_a_data_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TypeError in the replay is a bug in ctxbench: not "not replayed", the run ends with the
    one-line internal error (exit 2, never 1)."""
    root = _folder(tmp_path)

    def compare(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")

    monkeypatch.setattr(logs, "compare", compare)
    assert main(["fidelity", "--all-real", str(root), "--json", "-q"]) == 2
    err = capsys.readouterr().err
    assert "internal error: TypeError" in err and len(err.strip().splitlines()) == 1


@pytest.mark.usefixtures("failing")
def test_a_single_trace_that_raises_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ctxbench.bench.cli.fidelity as cli

    monkeypatch.setattr(cli, "compare", logs.compare)  # the failing replay of the fixture
    bad = _log(tmp_path / "bad.jsonl")
    assert main(["fidelity", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"ctxbench: error: {bad}: not replayed: ValueError: {NEGATIVE}"
    assert not any("Traceback" in line for line in err)
    good = _log(tmp_path / "good.jsonl")  # with another trace: that one is scored, this one named
    assert main(["fidelity", str(good), str(bad), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert docs[0]["requests"] == 4 and docs[1]["error"]["message"] == NEGATIVE


def test_a_folder_that_does_not_exist_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fidelity", "--all-real", str(tmp_path / "nowhere"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere: not a folder of recorded logs" in err


@pytest.mark.usefixtures("failing")
def test_the_measurement_names_what_it_did_not_measure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m ctxbench.bench.fidelity.measure`: a development conversation whose replay raised is
    named on stderr as not measured; the others are measured."""
    from ctxbench.bench.fidelity.measure import main as measure

    corpus = tmp_path / "corpus"
    (corpus / "dev").mkdir(parents=True)
    _log(corpus / "dev" / "bad.jsonl")
    _log(corpus / "dev" / "good.jsonl")
    assert measure(["--corpus", str(corpus), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["model_error"]  # good.jsonl measured
    assert err == f"note: not measured: bad.jsonl main: not replayed: ValueError: {NEGATIVE}\n"
