"""The optional compiled hot path (sim/core/native.py): a build is found by the hash of the sources, put
first on the package path, never loaded when stale or when pure Python is asked for; the build
command says what is missing. Whether this run uses the build is checked where CI compiled it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.sim.core import native
from ctxbench.sim.providers.anthropic_config import AnthropicConfig


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.delenv(native.NATIVE_DIR_ENV, raising=False)
    monkeypatch.setattr(native, "_root", None)
    return tmp_path


def _fake_build(root: Path) -> None:
    (root / "ctxbench" / "sim" / "providers").mkdir(parents=True)
    (root / native.DONE).write_text(json.dumps({"modules": list(native.COMPILED), "source": "elsewhere"}))


def test_the_key_follows_every_source_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sim, pol = tmp_path / "sim", tmp_path / "policies"
    (sim / "providers").mkdir(parents=True)
    pol.mkdir()
    (sim / "a.py").write_text("x = 1\n")
    (sim / "providers" / "b.py").write_text("y = 2\n")
    (pol / "c.py").write_text("z = 3\n")
    (sim / "notes.txt").write_text("not a source")
    monkeypatch.setattr(native, "_PACKAGES", {"sim": sim, "policies": pol})
    key = native.source_key()
    assert native.source_key() == key
    (sim / "notes.txt").write_text("changed, still not a source")
    assert native.source_key() == key
    (sim / "providers" / "b.py").write_text("y = 3\n")
    assert native.source_key() != key
    (sim / "providers" / "b.py").write_text("y = 2\n")
    assert native.source_key() == key
    (pol / "d.py").write_text("")
    assert native.source_key() != key


def test_a_finished_build_of_these_sources_goes_first_on_the_package_path(cache: Path) -> None:
    root = native.build_path()
    assert root is not None and root.parent == cache / "native"
    _fake_build(root)
    path = ["/src/sim"]
    native.activate(path)
    assert path == [str(root / "ctxbench" / "sim"), "/src/sim"]
    providers = ["/src/sim/providers"]
    native.extend(providers, "sim/providers")
    assert providers == [str(root / "ctxbench" / "sim" / "providers"), "/src/sim/providers"]


@pytest.mark.parametrize("why", ["pure", "unfinished", "other sources", "cache off"])
def test_no_build_is_loaded_when(why: str, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = native.build_path()
    assert root is not None
    _fake_build(root)
    if why == "pure":
        monkeypatch.setenv(native.PURE_ENV, "1")
    elif why == "unfinished":
        (root / native.DONE).unlink()
    elif why == "other sources":
        root.rename(root.with_name(root.name[:-4] + "0000"))
    else:
        monkeypatch.setenv("CTXBENCH_CACHE_DIR", "")
    path = ["/src/sim"]
    native.activate(path)
    assert path == ["/src/sim"] and native._root is None


def test_build_says_what_is_missing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-here")
    with pytest.raises(native.NativeBuildError, match="C compiler: 'no-such-compiler-here' not found"):
        native.build()
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", "")
    with pytest.raises(native.NativeBuildError, match="no folder for the build"):
        native.build()


def test_compile_exits_2_with_one_line_when_it_cannot_build(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-here")
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert "C compiler" in err and "Traceback" not in err


def test_clean_removes_every_build(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = native.build_path()
    assert root is not None
    _fake_build(root)
    assert main(["compile", "--clean"]) == 0
    assert "removed 1 build(s)" in capsys.readouterr().out
    assert not root.exists()


def test_status_json_names_the_modules_in_use(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "--status", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert set(state) == {"compiled_modules", "build", "built", "pure_python_forced"}
    assert set(state["compiled_modules"]) <= set(native.COMPILED)


@pytest.mark.skipif(
    os.environ.get("CTXBENCH_EXPECT_COMPILED") != "1",
    reason="the hot path is not compiled in this run: CI builds it (`ctxbench compile`) and sets "
    "CTXBENCH_EXPECT_COMPILED=1 for its compiled test run",
)
def test_the_compiled_modules_are_in_use() -> None:
    assert native.compiled_modules() == list(native.COMPILED)


def test_config_checks_read_the_annotations_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """mypyc erases a compiled class's annotations (`tuple` for `tuple[str, ...]`); the preset and
    profile checks read them from the source instead (`values._as_written`). Every registered
    config dataclass gets the same hints that way as from the class itself (in a pure run the
    class's own are the source's; in a compiled run the source is what is read anyway)."""
    import dataclasses
    import typing

    from ctxbench.sim.core import registry, values

    classes = [
        registry.lookup(kind, name) for kind in registry.KINDS for name in registry.names(kind)
    ]
    configs = [c for c in classes if isinstance(c, type) and dataclasses.is_dataclass(c)]
    configs.append(AnthropicConfig)  # built by a provider factory, checked as the others
    assert len(configs) > 20
    own = {c: dict(values.field_hints(c)) for c in configs}
    monkeypatch.setattr(native, "is_compiled", lambda cls: cls.__module__.startswith("ctxbench."))
    for c in configs:
        fields = {f.name for f in dataclasses.fields(c) if f.init}
        written = typing.get_type_hints(values._as_written(c), include_extras=True)
        assert {k: written.get(k, typing.Any) for k in fields} == own[c], c.__name__


def test_start_up_finds_the_build_through_a_note_of_the_sources_stats(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first start-up after a build hashes the sources' bytes and leaves a note under the hash
    of their names, sizes and times; later start-ups read the note instead of the sources."""
    root = native.build_path()
    assert root is not None
    _fake_build(root)
    native.activate(path := ["/src/sim"])
    assert path[0] == str(root / "ctxbench" / "sim")
    note = root.parent / f"stat-{native.stat_key()}"
    assert note.read_text() == root.name.rsplit("-", 1)[1]

    def unread() -> str:
        raise AssertionError("the sources were read although the note names their build")

    monkeypatch.setattr(native, "source_key", unread)
    monkeypatch.setattr(native, "_root", None)
    native.activate(path := ["/src/sim"])
    assert path[0] == str(root / "ctxbench" / "sim")


def test_a_build_of_the_same_sources_is_reused(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another checkout of the same sources (a CI clone) finds their build instead of nesting a
    second one into it."""
    root = native.build_path()
    assert root is not None
    _fake_build(root)
    assert native.build() == (root, None)
    assert main(["compile"]) == 0
    assert "built already" in capsys.readouterr().out
    assert sorted(p.name for p in root.iterdir()) == [native.DONE, "ctxbench"]
