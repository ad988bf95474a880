"""The parsed-data cache of the bundled YAML files (`sim/yamltext.load_bundled`): the same data as
parsing, kept by content, and never a reason to fail."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from ctxbench.policies.preset import PRESETS
from ctxbench.sim.core import yamltext
from ctxbench.sim.core.catalog import DATA

TEXT = "name: t\nbudget: 80k\nlist: [1, 2.5, true, null, 'x']\nnested: {a: {b: c}}\n"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/*.marshal"))


def test_a_file_read_twice_is_parsed_once(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TEXT)
    first = yamltext.load_bundled(f)
    assert first == yamltext.load_yaml(TEXT)
    assert len(_entries(cache)) == 1

    def no_parse(text: str) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(yamltext, "load_yaml", no_parse)
    assert yamltext.load_bundled(f) == first


def test_an_edited_file_is_a_new_entry(tmp_path: Path, cache: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TEXT)
    yamltext.load_bundled(f)
    f.write_text(TEXT.replace("80k", "90k"))
    assert yamltext.load_bundled(f)["budget"] == "90k"
    assert len(_entries(cache)) == 2


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", b"\xe9\x02\x00\x00\x00"])
def test_a_damaged_entry_is_parsed_again(tmp_path: Path, cache: Path, damage: bytes) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TEXT)
    yamltext.load_bundled(f)
    (entry,) = _entries(cache)
    entry.write_bytes(damage)
    assert yamltext.load_bundled(f) == yamltext.load_yaml(TEXT)


def test_no_cache_when_turned_off_or_unwritable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TEXT)
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", "")
    assert yamltext.load_bundled(f) == yamltext.load_yaml(TEXT)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(blocker / "cache"))  # under a file: cannot be made
    assert yamltext.load_bundled(f) == yamltext.load_yaml(TEXT)


def test_data_marshal_cannot_hold_is_parsed_each_time(tmp_path: Path, cache: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("when: 2026-01-01\n")
    assert yamltext.load_bundled(f) == {"when": datetime.date(2026, 1, 1)}
    assert _entries(cache) == []


def test_every_bundled_file_reads_back_as_parsed(cache: Path) -> None:
    files = [*DATA.glob("*.yaml"), *DATA.glob("profiles/*.yaml"), *PRESETS.glob("*.yaml")]
    assert len(files) > 20
    for f in files:
        parsed = yamltext.load_yaml(f.read_text(encoding="utf-8"))
        assert yamltext.load_bundled(f) == parsed
        assert yamltext.load_bundled(f) == parsed  # from the cache


def test_yaml_errors_keep_their_type() -> None:
    import yaml

    assert yamltext.YAMLError is yaml.YAMLError
    with pytest.raises(yamltext.YAMLError):
        yamltext.load_yaml("a: [1, 2")
