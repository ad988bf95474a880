"""Generator parameters from YAML spec files, `gen:` specs and the command line (traces/generators/spec.py):
one check for all three, errors that name the file, the key, what was expected and what was given."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.runs import make_tasks, run_task, trace_hash, worker_spec
from ctxbench.traces.format import dumps_trace, read_trace
from ctxbench.traces.generators import PARAMS
from ctxbench.traces.generators.spec import GenSpec, load_spec_file, open_trace, parse_gen_spec

SPEC = "generator: coding\nuser_turns: 3\nidle_seconds: [400, 500]\n"


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "gen.yaml"
    path.write_text(SPEC)
    return path


def test_a_spec_file_the_cli_and_an_inline_spec_make_the_same_trace(spec_file: Path, tmp_path: Path) -> None:
    out = {}
    for name, argv in {
        "config": ["generate", "--config", str(spec_file)],
        "cli": ["generate", "coding", "--turns", "3", "--set", "idle_seconds=400,500"],
    }.items():
        out[name] = tmp_path / f"{name}.jsonl"
        assert main([*argv, "-o", str(out[name])]) == 0
    texts = {n: p.read_text() for n, p in out.items()}
    texts["inline"] = dumps_trace(open_trace("gen:coding?user_turns=3&idle_seconds=400,500"))
    texts["gen-file"] = dumps_trace(open_trace(f"gen:{spec_file}"))
    assert len(set(texts.values())) == 1
    assert read_trace(out["config"]).header.meta["params"]["idle_seconds"] == [400.0, 500.0]


def test_the_command_line_overrides_the_file(spec_file: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["generate", "--config", str(spec_file), "--seed", "5", "--turns", "2", "-o", str(a)]) == 0
    argv = [
        "generate",
        "coding",
        "--seed",
        "5",
        "--turns",
        "2",
        "--set",
        "idle_seconds=400,500",
        "-o",
        str(b),
    ]
    assert main(argv) == 0
    assert a.read_bytes() == b.read_bytes()
    assert read_trace(a).header.meta["params"]["user_turns"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("generator: coding\nuser_turn: 3\n", "gen.yaml: unknown key 'user_turn' (did you mean 'user_turns'"),
        ("generator: codin\n", "gen.yaml: generator: unknown generator 'codin' (did you mean 'coding'?)"),
        ("user_turns: 3\n", "gen.yaml: missing key 'generator' (one of coding, game)"),
        ("- coding\n", "gen.yaml: a generator spec is a mapping with a 'generator' key, got ['coding']"),
        ("generator: coding\nidle_seconds: fast\n",
         "gen.yaml: idle_seconds: expected a list of 2 (a number, a number), got 'fast'"),
        ("generator: coding\nidle_seconds: [500, 400]\n",
         "gen.yaml: idle_seconds: expected a range [lo, hi] with 0 <= lo <= hi, got [500.0, 400.0]"),
        ("generator: coding\nsay_share: 2\n",
         "gen.yaml: say_share: expected a share between 0 and 1, got 2.0"),
        ("generator: game\nturns: 0\n", "gen.yaml: turns: expected a whole number >= 1, got 0"),
        ("generator: game\nwindow: 80kk\n", "gen.yaml: window: expected a token count like 80000, 80k"),
        ("generator: game\nfull_text: maybe\n", "gen.yaml: full_text: expected true or false, got 'maybe'"),
        ("generator: [coding\n", "gen.yaml:2: not valid YAML (did not find expected"),
    ],
)  # fmt: skip
def test_bad_spec_files_are_one_line_errors_naming_file_key_expected_and_given(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gen.yaml"
    path.write_text(text)
    for argv in (["generate", "--config", str(path)], ["run", f"gen:{path}", "--policy", "c-default"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["generate", "coding", "--turns", "0"],
         "generate coding: user_turns: expected a whole number >= 1, got 0"),
        (["generate", "coding", "--set", "idle_seconds=5,1"], "idle_seconds: expected a range [lo, hi]"),
        (["generate", "game", "--set", "turnz=3"], "unknown parameter 'turnz' (did you mean 'turns'?)"),
        (["generate"], "name a generator (game, coding) or give --config FILE"),
        (["run", "gen:coding?user_turns=x", "--policy", "c-default"], "user_turns: expected a whole number"),
        (["run", "gen:nope.yaml", "--policy", "c-default"], "nope.yaml: no such generator spec file"),
    ],
)  # fmt: skip
def test_the_cli_and_inline_specs_are_checked_the_same_way(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_config_of_another_generator_is_refused(
    spec_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generate", "game", "--config", str(spec_file)]) == 2
    assert "is a 'coding' spec, not 'game'" in capsys.readouterr().err


def test_token_counts_take_the_size_syntax(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("generator: game\nturns: 4\nwindow: 200k\noutput_tokens: [1k, 2k]\n")
    p = load_spec_file(path).make_params()
    assert p.window == 200_000 and p.output_tokens == (1_000, 2_000)
    assert parse_gen_spec("gen:game?turns=4&window=200k&output_tokens=1k,2k").make_params() == p


@pytest.mark.parametrize("generator", sorted(PARAMS))
def test_every_parameter_round_trips_through_the_inline_form(generator: str) -> None:
    """The inline text a worker runs (`GenSpec.inline`) parses back to the same parameters, for
    every field of every generator (its defaults given explicitly)."""
    defaults = PARAMS[generator]()
    spec = GenSpec(generator, {f.name: getattr(defaults, f.name) for f in dataclasses.fields(defaults)})
    back = parse_gen_spec(spec.inline())
    assert back.params == spec.params and back.make_params() == defaults


def test_a_worker_runs_a_spec_file_it_cannot_see(spec_file: Path) -> None:
    """compare/sweep send workers the spec's inline text (a Dask worker elsewhere cannot read the
    file); rows keep the name the user gave, and the run key is the same as the inline spec's."""
    trace = f"gen:{spec_file}"
    (task,) = make_tasks([trace], ["c-default"], [None], [None], [7])
    assert task.source == worker_spec(trace) and task.source.startswith("gen:coding?")
    inline_task = make_tasks([task.source], ["c-default"], [None], [None], [7])[0]
    assert task.trace_hash == inline_task.trace_hash == trace_hash(f"{trace}?seed=7")
    spec_file.unlink()
    row = run_task(task)
    assert row["trace"] == trace and row == {**run_task(inline_task), "trace": trace}


def test_compare_draws_a_spec_without_seed_from_each_seed(
    spec_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["compare", f"gen:{spec_file}", "--policy", "c-default", "--seeds", "2", "--format", "json"])
        == 0
    )
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert len({r["trace_hash"] for r in runs}) == 2
