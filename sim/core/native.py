"""The simulator's optional compiled hot path (issue 13): the modules in `COMPILED` built by mypyc.

- `ctxbench compile` (`build`) compiles them into the cache folder (yamltext `cache_dir()`), in a
  folder named by the interpreter and a hash of every source file of `ctxbench.sim` and
  `ctxbench.policies` (`source_key`). An edited source, or another Python, finds no build of its
  key: a stale build is never loaded, and the simulator runs in pure Python until it is rebuilt.
- At import, `ctxbench.sim` looks for the build of the current key (`activate`) and, when there is
  one, puts it first on its package path; each compiled subpackage does the same (`extend`). So a
  compiled module is imported in place of its source, and any other module from its source.
- `CTXBENCH_PURE=1` keeps pure Python. The builds are in `$CTXBENCH_NATIVE_DIR` if it is set (the
  tests set it, since they give the other caches a folder of their own), else in the cache folder.
- What the build needs: the `native` extra (mypy, whose mypyc compiles, and setuptools, which
  drives the C compiler) and a C compiler (`$CC`, else `cc`). Without them ctxbench is the same
  program in pure Python; CI runs the whole test suite both ways, and the records are the same.

The compiled modules hold the per-request work (the transcript and its hash chains, their edits,
the Anthropic cache lookups); config dataclasses stay in pure modules, since mypyc erases the
annotations (`Literal`, `tuple[...]`) that the preset checks read (`sim/core/values.py`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from ctxbench.sim.core.yamltext import blake2b, cache_dir

COMPILED: tuple[str, ...] = (
    "ctxbench.sim.core.transcript_arrays",
    "ctxbench.sim.core.transcript",
    "ctxbench.sim.core.transcript_edits",
    "ctxbench.sim.providers.anthropic",
    "ctxbench.sim.core.provider",
    "ctxbench.sim.providers.thinking",
    "ctxbench.sim.core.records",
    "ctxbench.sim.harness.calls",
    "ctxbench.sim.harness.conversation",
    "ctxbench.sim.harness.recorded",
    "ctxbench.sim.harness.summary_calls",
    "ctxbench.sim.harness.coding",
    "ctxbench.policies.view",
    "ctxbench.policies.masking",
    "ctxbench.policies.eviction",
    "ctxbench.policies.marks",
    "ctxbench.policies.estimators",
    "ctxbench.policies.tiers",
    "ctxbench.policies.condensers",
)
PURE_ENV = "CTXBENCH_PURE"
NATIVE_DIR_ENV = "CTXBENCH_NATIVE_DIR"
GROUP = "ctxbench.sim._native"  # mypyc's shared library of the compiled modules, inside the package
DONE = "BUILT.json"  # written last: a folder without it is an unfinished build
_SIM = Path(__file__).resolve().parents[1]  # this file is sim/core/native.py
_ROOT = _SIM.parent  # the folder of the four packages
_PACKAGES = {"sim": _SIM, "policies": _ROOT / "policies"}  # their sources make the key
_LINKED = ("sim", "policies", "traces", "bench")  # what mypy follows from the compiled modules

_root: Path | None = None  # the build in use, once `activate` found one


class NativeBuildError(ValueError):
    """The compiled hot path cannot be built here: what is missing, and how to get it."""


def source_key() -> str:
    """A hash of every source file of `ctxbench.sim` and `ctxbench.policies` (names and bytes)."""
    h = blake2b(sys.implementation.cache_tag.encode(), digest_size=12)
    for rel, path in _sources():
        h.update(f"{rel}\0".encode())
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def stat_key() -> str:
    """A hash of the sources' names, sizes and modification times: the quick way to the source
    key at start-up (`_current_key`), without reading them."""
    h = blake2b(sys.implementation.cache_tag.encode(), digest_size=12)
    for rel, path in _sources():
        st = os.stat(path)
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def _current_key(folder: Path) -> str:
    """The source key, read from the note the stat key names in `folder` when there is one (a
    build, or a start-up that found its build, leaves it), else computed and noted."""
    note = folder / f"stat-{stat_key()}"
    try:
        return note.read_text()
    except OSError:
        key = source_key()
    if (folder / f"{sys.implementation.cache_tag}-{key}" / DONE).is_file():
        with contextlib.suppress(OSError):
            note.write_text(key)
    return key


def _sources() -> list[tuple[str, str]]:
    """(name as `sim/providers/anthropic.py`, path) of every source of the two packages, sorted."""
    found: list[tuple[str, str]] = []
    for name, folder in _PACKAGES.items():
        _walk(str(folder), name, found)
    return sorted(found)


def _walk(folder: str, rel: str, found: list[tuple[str, str]]) -> None:
    for entry in os.scandir(folder):
        if entry.name.endswith(".py"):
            found.append((f"{rel}/{entry.name}", entry.path))
        elif entry.name != "__pycache__" and entry.is_dir():
            _walk(entry.path, f"{rel}/{entry.name}", found)


def builds_folder() -> Path | None:
    """`$CTXBENCH_NATIVE_DIR` (empty: no builds), else the cache folder's `native`."""
    env = os.environ.get(NATIVE_DIR_ENV)
    if env is not None:
        return Path(env) if env else None
    folder = cache_dir()
    return None if folder is None else folder / "native"


def build_path() -> Path | None:
    """Where the build of the current sources goes (None when the cache folder is off)."""
    folder = builds_folder()
    return None if folder is None else folder / f"{sys.implementation.cache_tag}-{source_key()}"


def activate(path: list[str]) -> None:
    """Put the current build, if there is one, first on `ctxbench.sim`'s package path (its
    `__init__` calls this). Costs one stat when nothing was ever built, else a stat of each
    source (~0.5 ms; a hash of their bytes, ~3 ms, the first time after a change)."""
    global _root
    folder = builds_folder()
    if os.environ.get(PURE_ENV, "") not in ("", "0") or folder is None or not folder.is_dir():
        return
    root = folder / f"{sys.implementation.cache_tag}-{_current_key(folder)}"
    if (root / DONE).is_file():
        _root = root
        extend(path, "sim")
        # this package was imported before the build was known: its compiled modules come next
        core_path: list[str] = sys.modules[__name__.rsplit(".", 1)[0]].__path__  # type: ignore[assignment]
        extend(core_path, "sim/core")


def extend(path: list[str], package: str) -> None:
    """Put the build's folder of `package` (`sim`, `sim/providers`) first on its package path."""
    if _root is not None and (_root / "ctxbench" / package).is_dir():
        path.insert(0, str(_root / "ctxbench" / package))


def is_compiled(cls: type) -> bool:
    """Whether `cls` comes from a module imported from a build (not from its source)."""
    module = sys.modules.get(cls.__module__)
    return not (getattr(module, "__file__", None) or ".py").endswith(".py")


def source_annotations(cls: type) -> dict[str, str]:
    """The annotations of a top-level class of a compiled module, as written in its source: mypyc
    keeps erased ones (`tuple` for `tuple[str, ...]`, `str` for a `Literal`), which the preset
    and profile checks cannot use (`sim/core/values.py field_hints`)."""
    import ast

    path = _ROOT.joinpath(*cls.__module__.split(".")[1:]).with_suffix(".py")
    for node in ast.parse(path.read_bytes()).body:
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return {
                item.target.id: ast.unparse(item.annotation)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            }
    raise LookupError(f"class {cls.__name__} not found at the top of {path}")


def compiled_modules() -> list[str]:
    """The modules of `COMPILED` imported from the build (importing them)."""
    import importlib

    return [m for m in COMPILED if not (importlib.import_module(m).__file__ or "").endswith(".py")]


def status() -> dict[str, object]:
    """What `ctxbench compile --status` and `ctxbench speed` report."""
    root = build_path()
    built = root is not None and (root / DONE).is_file()
    pure = os.environ.get(PURE_ENV, "") not in ("", "0")
    return {
        "compiled_modules": compiled_modules(),
        "build": str(root) if root is not None else None,
        "built": built,
        "pure_python_forced": pure,
    }


def build(force: bool = False) -> tuple[Path, float | None]:
    """Compile `COMPILED` with mypyc into `build_path()` (module doc); returns the folder and the
    seconds it took, or None when a finished build of these sources was there (another checkout
    of the same sources made it; `force` builds anew). Raises NativeBuildError naming what is
    missing or the compiler's error."""
    import json
    import shutil
    import subprocess
    import tempfile
    import time

    dest = build_path()
    if dest is not None and (dest / DONE).is_file() and not force:
        return dest, None
    if dest is None:
        raise NativeBuildError(
            "no folder for the build: CTXBENCH_NATIVE_DIR, or CTXBENCH_CACHE_DIR, is set empty"
        )
    try:
        import mypyc.build  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as exc:
        raise NativeBuildError(
            f"compiling needs the native extra ({exc.name} is missing): pip install 'ctxbench[native]'"
        ) from exc
    cc = os.environ.get("CC", "cc").split()[0]
    if shutil.which(cc) is None:
        raise NativeBuildError(f"compiling needs a C compiler: {cc!r} not found (set CC, or install gcc)")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ctxbench-native-") as tmp:
        work = Path(tmp)
        (work / "ctxbench").mkdir()
        for name in _LINKED:
            (work / "ctxbench" / name).symlink_to(_ROOT / name, target_is_directory=True)
        # mypy's settings of the project (pyproject.toml), for the installed names of the link tree
        (work / "mypy.ini").write_text(_MYPY_INI)
        staging = work / "out"
        files = [m.replace(".", "/") + ".py" for m in COMPILED]
        done = subprocess.run(
            [sys.executable, "-c", _BUILD_SCRIPT, str(staging), str(work / "temp"), GROUP, *files],
            cwd=work,
            env={**os.environ, "MYPYPATH": str(work)},
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise NativeBuildError(f"mypyc could not compile the hot path:\n{tail}")
        source = str(_ROOT)
        info = {"modules": list(COMPILED), "python": sys.version.split()[0], "source": source}
        (staging / DONE).write_text(json.dumps(info, indent=2) + "\n")
        for old in _builds_of(source):
            shutil.rmtree(old, ignore_errors=True)  # this install's builds of earlier sources
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)  # a build of the same sources, made anew (`force`)
        shutil.move(str(staging), dest)
        for note in dest.parent.glob("stat-*"):  # notes of removed builds
            with contextlib.suppress(OSError):
                if not (dest.parent / f"{sys.implementation.cache_tag}-{note.read_text()}").is_dir():
                    note.unlink()
        (dest.parent / f"stat-{stat_key()}").write_text(dest.name.rsplit("-", 1)[1])
    return dest, time.perf_counter() - start


def _builds_of(source: str) -> list[Path]:
    import json

    folder = builds_folder()
    found = []
    for old in folder.glob(f"{sys.implementation.cache_tag}-*") if folder is not None else ():
        try:
            if json.loads((old / DONE).read_text()).get("source") == source:
                found.append(old)
        except (OSError, ValueError):
            found.append(old)  # an unfinished build
    return found


def clean() -> int:
    """Remove every build (and the stat notes); returns how many builds there were."""
    import shutil

    folder = builds_folder()
    olds = sorted(folder.iterdir()) if folder is not None and folder.is_dir() else []
    builds = [old for old in olds if old.is_dir()]
    for old in olds:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
    return len(builds)


_MYPY_INI = """[mypy]
explicit_package_bases = True
namespace_packages = True
ignore_missing_imports = True
"""

# Run in a child process with the link tree as its folder: mypyc writes its C sources under
# ./build, setuptools puts the extensions under argv[1] as ctxbench/sim/….so.
_BUILD_SCRIPT = """
import sys
from setuptools import setup
from mypyc.build import mypycify
out, temp, group, *files = sys.argv[1:]
setup(name="ctxbench-native", ext_modules=mypycify(files, group_name=group, opt_level="3"),
      script_args=["build_ext", "--build-lib", out, "--build-temp", temp])
"""
