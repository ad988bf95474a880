"""Cline's context components (policies/cline.py) and the `cline` preset, against the real runs of
Cline CLI 2.18.0 against `ctxbench serve` (tests/traces/importers/test_cline_task_live.py): the
preset, run on each recorded task with nothing taken from its truncations, compacts before the same
requests as Cline did and predicts every bill."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.policies.cline import allowance, truncated_end
from ctxbench.policies.preset import load_policy, with_policy_set
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.traces.importers import import_paths
from tests.traces.importers.test_cline_task_live import _ledger, _task


@pytest.mark.parametrize(
    ("window", "allowed"),
    [(64_000, 37_000), (128_000, 98_000), (200_000, 160_000), (20_000, 16_000), (1_000_000, 960_000)],
)
def test_allowance_is_clines(window: int, allowed: int) -> None:
    assert allowance(window) == allowed


def _msgs(n: int) -> list[Message]:
    f = BlockFactory()
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(n)]
    return [Message.of(r, (f.text(r, f"m{i}"),)) for i, r in enumerate(roles)]


@pytest.mark.parametrize(
    ("n", "harder", "end"),
    [
        (5, False, 1),  # half of the 3 after the pair, in pairs: none (the notice only), as Cline's [2, 1]
        (7, False, 3),  # half of 5: one pair, [2, 3]
        (13, False, 5),  # half of 11: two pairs
        (13, True, 9),  # over twice the allowance: three quarters of 11 in pairs, [2, 9]
        (7, True, 3),  # three quarters of 5: one pair (the `anthropic-long` retries' [2, 3])
    ],
)
def test_the_range_left_out_is_clines(n: int, harder: bool, end: int) -> None:
    assert truncated_end(_msgs(n), harder) == end


def _fidelity(tmp_path, run: str, policy):  # type: ignore[no-untyped-def]
    return compare(import_paths([_task(tmp_path, run)]).traces[0], policy=policy)


def test_preset_on_anthropic_past_its_window_truncates_after_each_refused_prompt(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each prompt over the 200,000-token window is refused; the preset truncates (a quarter kept,
    the task's first block replaced) and sends it again, as Cline did: same compaction points,
    every bill within tolerance, the cost the bill's (the log's output, one token more per
    request than served: tests/traces/importers/test_cline_task_live.py)."""
    sf = _fidelity(tmp_path, "anthropic-long", load_policy("cline"))
    assert sf.track.real == sf.track.own == [3, 4, 5, 6]
    assert [r.within for r in sf.requests] == [True] * 9
    assert sf.cost_predicted == pytest.approx(sum(c for _, c in _ledger("anthropic-long")) + 9 * 15e-6)


def test_preset_on_a_20k_openai_compatible_window_counts_reads_twice_as_cline_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """At a 20,000-token window (allowance 16,000), Cline truncated before every request from the
    third, its previous totals 13,225 to 15,440 tokens: it counts the cached part twice. Without
    that, the preset truncates two requests late, once the prompt itself passes 16,000."""
    policy = with_policy_set(load_policy("cline"), ["compaction.window=20000"])
    twice = with_policy_set(policy, ["compaction.reads_counted_twice=true"])
    sf = _fidelity(tmp_path, "truncated", twice)
    assert sf.track.real == sf.track.own == [2, 3, 4, 5, 6]
    assert [r.within for r in sf.requests] == [True] * 7
    assert _fidelity(tmp_path / "b", "truncated", policy).track.own == [4, 5, 6]


@pytest.mark.parametrize("run", ["anthropic", "openai"])
def test_preset_on_the_short_runs_never_truncates(tmp_path, run: str) -> None:  # type: ignore[no-untyped-def]
    sf = _fidelity(tmp_path, run, load_policy("cline"))
    assert sf.track.own == sf.track.real == []
    assert [r.within for r in sf.requests] == [True] * 7


def test_fidelity_cli_takes_the_presets_settings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`ctxbench fidelity TASK --policy cline --policy-set ...` (as `run` takes them); a bad key is
    named with the valid ones, exit 2."""
    import json
    import subprocess
    import sys

    folder = str(_task(tmp_path, "truncated"))
    cli = [sys.executable, "-m", "ctxbench.bench.cli", "fidelity", folder, "--policy", "cline"]
    sets = ["--policy-set", "compaction.window=20000", "--policy-set", "compaction.reads_counted_twice=true"]
    r = subprocess.run([*cli, *sets, "--json"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    (doc,) = json.loads(r.stdout)
    assert doc["compactions_before"] == {"real": [2, 3, 4, 5, 6], "policy": [2, 3, 4, 5, 6]}
    bad = subprocess.run(
        [*cli, "--policy-set", "compaction.windw=1"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "did you mean 'window'" in bad.stderr and "Traceback" not in bad.stderr
