"""The pytest plugin fails a test on a prefix break (with a readable message) and passes otherwise."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from ctxbench.bench.prefix.pytest_plugin import PrefixBreakError, PrefixLog, assert_prefix_stable

pytest_plugins = ["pytester"]

TEST_FILE = """
def body(msgs):
    return {"model": "m", "system": "S", "messages": [{"role": r, "content": c} for r, c in msgs]}

def test_recorded_requests(prefix_log):
    prefix_log.record(body([("user", "hi")]))
    prefix_log.record(body([("user", "hi"), ("assistant", "a"), ("user", "look")]))
    first = "BROKEN" if BREAK else "hi"
    later = [("assistant", "a"), ("user", "look"), ("assistant", "b"), ("user", "go")]
    prefix_log.record(body([("user", first), *later]))
    prefix_log.assert_stable()
"""


@pytest.mark.parametrize("broken", [False, True])
def test_plugin_fixture_fails_on_a_break_and_passes_otherwise(
    pytester: pytest.Pytester, broken: bool
) -> None:
    pytester.makepyfile(f"BREAK = {broken}\n" + TEST_FILE)
    # Installed, the plugin loads through its pytest11 entry point; from a bare checkout, by name.
    plugin = "ctxbench.bench.prefix.pytest_plugin"
    installed = any(ep.value == plugin for ep in entry_points(group="pytest11"))
    load = [] if installed else ["-p", "ctxbench.bench.prefix.pytest_plugin"]
    result = pytester.runpytest(*load, "-p", "no:cacheprovider")
    if broken:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "*PrefixBreakError*",
                "*request 2*does not start with request 1*message 0, block 0, byte 0*",
                "*parent: hi*",
                "*this:   BROKEN*",
            ]
        )
    else:
        result.assert_outcomes(passed=1)


def test_assert_helper_accepts_declared_compaction_and_json_lines(tmp_path: object) -> None:
    log = PrefixLog()
    log.record(
        {"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}
    )
    log.record(
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": "y"},
                {"role": "user", "content": "z"},
            ],
        }
    )
    log.record(
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "summary"},
                {"role": "assistant", "content": "k"},
                {"role": "user", "content": "more"},
            ],
        },
        declared="compaction",
    )
    log.assert_stable()
    assert len(log) == 3
    import json

    lines = [json.dumps({"model": "m", "messages": [{"role": "user", "content": t}]}) for t in ("a", "b")]
    lines.append(
        json.dumps(
            {
                "model": "m",
                "messages": [{"role": "user", "content": "b"}, {"role": "assistant", "content": "c"}],
            }
        )
    )
    with pytest.raises(PrefixBreakError, match="does not start with"):
        assert_prefix_stable(
            [
                *lines[:1],
                lines[2],
                json.dumps(
                    {
                        "model": "m",
                        "messages": [
                            {"role": "user", "content": "B"},
                            {"role": "assistant", "content": "c"},
                            {"role": "user", "content": "d"},
                        ],
                    }
                ),
            ]
        )
