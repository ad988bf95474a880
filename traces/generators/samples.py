"""The committed sample traces under `traces/samples/` and how to rebuild them.

Run `python -m ctxbench.traces.generators.samples` after changing a generator; a test checks that every
sample file is exactly what its generator gives today, so samples cannot drift silently.
"""

from __future__ import annotations

from pathlib import Path

from ctxbench.traces.format import write_trace
from ctxbench.traces.generators import GENERATORS, params_for

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"

# file name -> (generator, parameter overrides)
SAMPLES: dict[str, tuple[str, dict[str, object]]] = {
    "game-300.jsonl": ("game", {"turns": 300, "seed": 0}),
    "game-60.jsonl": ("game", {"turns": 60, "seed": 1}),
    "game-short.jsonl": ("game", {"turns": 12, "seed": 2, "full_text": True, "settlement_image": True}),
    "coding-short.jsonl": ("coding", {"user_turns": 3, "seed": 0}),
    "coding-long.jsonl": ("coding", {"user_turns": 30, "seed": 0, "manual_compact_share": 0.05}),
}


def write_samples(directory: Path = SAMPLES_DIR) -> list[Path]:
    """(Re)write every sample trace into `directory`; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (generator, overrides) in SAMPLES.items():
        path = directory / name
        write_trace(GENERATORS[generator](params_for(generator, **overrides)), path)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_samples():
        print(f"{written} ({written.stat().st_size} bytes)")
