"""One size syntax, close-match hints and value checks from type hints (sim/core/values.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.bench.cli import main
from ctxbench.policies.preset import PresetError, load_policy
from ctxbench.sim.core.values import (
    Fraction,
    Tokens,
    ValueProblem,
    build,
    closest,
    parse_assignments,
    parse_size,
    parse_sizes,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("80000", 80_000), ("80k", 80_000), ("80K", 80_000), ("1.5M", 1_500_000), ("1.5m", 1_500_000),
     ("120_000", 120_000), ("0.5k", 500), (80_000, 80_000)],
)  # fmt: skip
def test_size_syntax_accepts(text: object, tokens: int) -> None:
    assert parse_size(text) == tokens


@pytest.mark.parametrize("text", ["80kk", "80 tokens", "-5", "1.2345k", "k", "", "8e4", "80kb", True, -1])
def test_size_syntax_refuses(text: object) -> None:
    with pytest.raises(ValueError, match="80k"):
        parse_size(text)


@given(st.integers(min_value=0, max_value=10**9))
def test_size_roundtrip(n: int) -> None:
    assert parse_size(str(n)) == n
    assert parse_size(f"{n}k") == n * 1000


def test_sizes_ranges_and_lists() -> None:
    assert parse_sizes("32k:48k:8k") == [32_000, 40_000, 48_000]
    assert parse_sizes("1.5M,80K") == [1_500_000, 80_000]
    with pytest.raises(ValueError, match="80kk"):
        parse_sizes("32k:80kk:8k")


def test_closest_forgives_case_and_underscores() -> None:
    assert closest("h-drect", ["h-direct", "h-openrouter"]) == ["h-direct"]
    assert closest("claude_code", ["claude-code", "codex"]) == ["claude-code"]
    assert closest("zzz", ["claude-code"]) == []


@dataclass(frozen=True)
class Knobs:
    budget: Tokens = 1000
    trigger: Fraction = 0.5
    span: tuple[int, int] = (1, 2)
    names: tuple[str, ...] = ()
    flag: bool = False


def test_build_checks_values_against_hints() -> None:
    k = build(Knobs, {"budget": "120k", "trigger": 1, "span": [3, 4], "names": ["a"]}, "f.yaml: x")
    assert k == Knobs(120_000, 1.0, (3, 4), ("a",), False)
    with pytest.raises(
        ValueProblem, match=r"f.yaml: x.trigger: expected a number between 0 and 1, got 'high'"
    ):
        build(Knobs, {"trigger": "high"}, "f.yaml: x")
    with pytest.raises(ValueProblem, match=r"x.trigger: expected a number between 0 and 1, got 1.5"):
        build(Knobs, {"trigger": 1.5}, "x")
    with pytest.raises(ValueProblem, match=r"x.span: expected a list of 2"):
        build(Knobs, {"span": [1]}, "x")
    with pytest.raises(ValueProblem, match=r"x.flag: expected true or false, got 'yes please'"):
        build(Knobs, {"flag": "yes please"}, "x")
    with pytest.raises(ValueProblem, match=r"unknown key 'budgte' \(did you mean 'budget'\?\)"):
        build(Knobs, {"budgte": 1}, "x")


def test_assignments_from_the_command_line() -> None:
    got = parse_assignments(Knobs, ["span=400,500", "budget=80k", "flag=true", "names=a,b"], "--set")
    assert got == {"span": (400, 500), "budget": 80_000, "flag": True, "names": ("a", "b")}
    with pytest.raises(ValueProblem, match="expected KEY=VALUE"):
        parse_assignments(Knobs, ["span"], "--set")


PRESET = """name: mine
estimator: anchored
eviction: {name: keep-last, n: 2}
compaction: {name: h-handoff, trigger: 0.6}
marks: {name: h-direct}
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("budget: 120k\n", None),
        (
            "budget: 120kk\n",
            r"mine.yaml: budget: expected a token count like 80000, 80k, 80K or 1.5M, got '120kk'",
        ),
        ("budget: 1k\n", r"mine.yaml: budget 1000 is outside 32000..200000"),
        ("budgte: 120k\n", r"mine.yaml: unknown key 'budgte' \(did you mean 'budget'"),
        ("retries: many\n", r"mine.yaml: retries: expected a whole number, got 'many'"),
    ],
)
def test_preset_values_name_file_and_key(tmp_path: Path, extra: str, message: str | None) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(PRESET + extra)
    if message is None:
        assert load_policy(str(path)).budget == 120_000
        return
    with pytest.raises(PresetError, match=message):
        load_policy(str(path))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("trigger: 0.6", 'trigger: "high"', r"compaction.trigger: expected a number between 0 and 1"),
        ("{name: h-direct}", "{name: h-direct, ttl: 5 min}", r"marks.ttl: expected one of '5m', '1h'"),
        ("{name: h-direct}", "{name: h-drect}", r"unknown marks 'h-drect' \(did you mean 'h-direct'\?\)"),
        ("n: 2", "nn: 2", r"eviction: unknown key 'nn' \(did you mean 'n'\?\)"),
    ],
)  # fmt: skip
def test_component_values_name_file_and_key(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(PRESET.replace(old, new))
    with pytest.raises(PresetError, match=message):
        load_policy(str(path))


def test_every_shipped_preset_passes_the_checks() -> None:
    from ctxbench.policies.preset import preset_names

    for name in preset_names():
        assert load_policy(name).name


def test_cli_hints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "traces/samples/game-60.jsonl", "--policy", "h-drect"]) == 2
    assert "did you mean 'h-direct'?" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["rnu"])
    assert exc.value.code == 2
    assert "did you mean 'run'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "traces/samples/game-60.jsonl", "--policy", "h-direct", "--budget", "80kk"])
    assert "80kk" in capsys.readouterr().err
