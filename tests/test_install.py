"""A normal (non-editable) install lands under one import name and harms no other software
(issue 10): next to PyPI's `traces` package, `from traces import TimeSeries` still works, every
file of the installed distribution sits under `ctxbench/` (its dist-info aside), the console
script runs, and the pytest plugin leaves a project with its own `sim`, `traces` and `bench`
packages green.

The fresh environment borrows this test run's dependencies (numpy, simpy, pytest, …) through a
`.pth` line instead of downloading them, and the package is built without build isolation from a
copy of the source tree, so the test needs the network only for PyPI's `traces` (it skips, saying
why, when that cannot be had) and stays far under a minute.
"""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "sim", "policies", "traces", "bench")
PYPI_TRACES = "traces==0.7.0"  # PyPI's unrelated `traces` (unevenly-spaced time series)


def _run(cmd: list[str], cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def _venv(root: Path) -> tuple[Path, Path]:
    """A fresh venv whose only borrowed paths are this interpreter's site-packages (appended after
    its own, so what it installs wins); returns (python, its site-packages)."""
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(root)]).returncode == 0
    python = root / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    own = Path(purelib.stdout.strip())
    borrowed = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    (own / "_ctxbench_test_borrowed.pth").write_text("\n".join(dict.fromkeys(borrowed)) + "\n")
    return python, own


def _source_copy(dest: Path) -> Path:
    """The package sources without build leftovers, so building never writes into the work tree."""
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", ".*")
    dest.mkdir(parents=True)
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=junk)
        else:
            shutil.copy2(src, dest / name)
    return dest


SCRATCH = {
    "sim/__init__.py": "WHO = 'scratch sim'\n",
    "traces/__init__.py": "WHO = 'scratch traces'\n",
    "bench/__init__.py": "WHO = 'scratch bench'\n",
    "tests/test_own_packages.py": (
        "import bench\nimport sim\nimport traces\n\n\n"
        "def test_the_projects_own_packages_are_imported():\n"
        "    assert (sim.WHO, traces.WHO, bench.WHO) == ('scratch sim', 'scratch traces', 'scratch bench')\n"
    ),
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\npythonpath = ['.']\n",
}


@pytest.mark.slow
def test_non_editable_install_next_to_pypi_traces(tmp_path: Path) -> None:
    python, own = _venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    got = _run([*pip, PYPI_TRACES], timeout=120)
    if got.returncode != 0:
        pytest.skip(f"PyPI {PYPI_TRACES} cannot be installed here: {got.stderr.strip()[-300:]}")
    src = _source_copy(tmp_path / "src")
    built = _run([*pip, "--no-build-isolation", str(src)])
    assert built.returncode == 0, built.stderr[-2000:]

    # PyPI's traces is untouched
    pypi_traces = "from traces import TimeSeries; TimeSeries()[0] = 1; print('ok')"
    ts = _run([str(python), "-c", pypi_traces], tmp_path)
    assert ts.stdout.strip() == "ok", ts.stderr

    # every installed file of the distribution sits under ctxbench/ (its dist-info aside)
    infos = list(own.glob("ctxbench-*.dist-info"))
    assert len(infos) == 1, infos
    files = [line.split(",")[0] for line in (infos[0] / "RECORD").read_text().splitlines() if line]
    strays = [
        f for f in files if not f.startswith(("ctxbench/", f"{infos[0].name}/", "../../../bin/ctxbench"))
    ]
    assert not strays, strays
    assert any(f.startswith("ctxbench/sim/") for f in files)
    assert not any("/speed/" in f or f.endswith("conftest.py") for f in files)
    assert not (own / "sim").exists() and not (own / "bench").exists() and not (own / "policies").exists()

    # the console script runs from the installed copy
    script = python.parent / "ctxbench"
    presets = _run([str(script), "presets"], tmp_path)
    assert presets.returncode == 0, presets.stderr
    assert "h-direct" in presets.stdout
    where = _run([str(python), "-c", "import ctxbench.sim; print(ctxbench.sim.__file__)"], tmp_path)
    assert where.stdout.strip().startswith(str(own)), where.stdout

    # a project with its own sim/, traces/ and bench/ runs pytest green with the plugin loaded
    project = tmp_path / "project"
    for rel, text in SCRATCH.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    run = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--trace-config"], cwd=project)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout
    assert "ctxbench.bench.prefix.pytest_plugin" in run.stdout  # the plugin was loaded, and was harmless
