"""The lazy CLI: the verb table in `bench/cli/__init__.py` and the modules in `bench/cli/` agree, every
verb is listed by `ctxbench --help` and answers `ctxbench VERB --help`, and choosing a verb imports
only what that verb needs."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys

import pytest

from ctxbench.bench import cli as commands
from ctxbench.bench.cli import VERBS, build_parser, chosen_verb, main

PLOTTING_VERBS = {"plot", "report"}


def _registered(module: str) -> dict[str, str | None]:
    """Verb name -> help text of what `module.register` adds to a fresh sub-parser set."""
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(sub)
    return {action.dest: action.help for action in sub._choices_actions}


def test_every_command_module_is_in_the_table() -> None:
    modules = {f"{commands.__name__}.{m.name}" for m in pkgutil.iter_modules(commands.__path__)}
    assert {m for m in modules if not m.rsplit(".", 1)[1].startswith("_")} == {row.module for row in VERBS}


@pytest.mark.parametrize("row", VERBS, ids=[row.name for row in VERBS])
def test_each_module_registers_its_verb_with_the_tables_help(row: object) -> None:
    assert isinstance(row, tuple)
    name, module, help_text = row
    assert _registered(module) == {name: help_text}


def test_top_level_help_lists_every_verb_with_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for row in VERBS:
        assert f"{row.name} {' '.join(row.help.split())}" in out


@pytest.mark.parametrize("verb", [row.name for row in VERBS])
def test_verb_help_shows_its_own_arguments(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([verb, "--help"])
    assert stop.value.code == 0
    assert f"usage: ctxbench {verb}" in capsys.readouterr().out


@pytest.mark.parametrize("verb", [row.name for row in VERBS])
def test_a_verb_parsed_alone_parses_as_among_the_others(verb: str) -> None:
    """A command line that starts with its verb builds that verb's parser only (`alone`), the same
    as among the others: its help and usage, and the top-level usage its errors print."""

    def verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    full, alone = build_parser(verb), build_parser(verb, alone=True)
    assert list(verbs(alone)) == [verb]
    assert verbs(alone)[verb].format_help() == verbs(full)[verb].format_help()
    assert alone.format_usage() == full.format_usage()


def test_the_full_parser_has_every_verb_with_a_handler() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [row.name for row in VERBS]
    for name, parser in sub.choices.items():
        assert parser.get_default("handler") is not None, name


def test_chosen_verb_is_the_first_word_that_is_not_a_flag() -> None:
    assert chosen_verb(["--version"]) is None
    assert chosen_verb(["run", "t.jsonl", "--policy", "h-direct"]) == "run"


_PROBE = """
import importlib, sys
from ctxbench.bench.cli import VERBS, main
try:
    main(["--help"])
except SystemExit:
    pass
loaded = sorted(row.module for row in VERBS if row.module in sys.modules)
assert not loaded, f"--help imported {loaded}"
for row in VERBS:
    if row.name not in %r:
        importlib.import_module(row.module)
heavy = sorted(m for m in ("matplotlib", "numpy") if m in sys.modules)
assert not heavy, f"verbs that neither plot nor compute tables imported {heavy}"
"""


def test_only_plotting_verbs_import_matplotlib_or_numpy() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE % (PLOTTING_VERBS,)], capture_output=True, text=True, check=False
    )
    assert probe.returncode == 0, probe.stderr


def _options(verb: str) -> dict[str, tuple[object, ...]]:
    sub = next(a for a in build_parser(verb)._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[verb]
    return {
        (a.option_strings or [a.dest])[-1]: (a.help, a.choices, a.default, a.required)
        for a in parser._actions
        if a.dest != "help"
    }


def test_drive_and_validate_take_the_same_trace_policy_and_wire_options() -> None:
    """One helper declares them (bench/cli/_serving.add_drive_options): same help, choices,
    defaults; each verb adds only its own (drive: --server, --model, --records; validate:
    --provider, --seed, --verbose)."""
    drive, validate = _options("drive"), _options("validate")
    shared = {"trace", "--policy", "--api", "--no-stream"}
    assert shared <= set(drive) and shared <= set(validate)
    assert {k: drive[k] for k in shared} == {k: validate[k] for k in shared}
    assert set(drive) - shared == {"--server", "--model", "--records"}
    assert set(validate) - shared == {"--provider", "--seed", "--verbose"}
