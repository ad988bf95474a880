"""The grid a model's billed reads fall on (bench/fidelity/grids.py, the profiles' `read_units`),
and the naive reading on that grid (bench/fidelity/auto.py `grid`)."""

from __future__ import annotations

from collections import Counter

from ctxbench.bench.fidelity.auto import grid, naive_read
from ctxbench.bench.fidelity.grids import GridCounts, exact, listed
from ctxbench.sim.core.profiles import profile


def _counts(pairs: list[tuple[int, int]]) -> GridCounts:
    return GridCounts(Counter(read for _, read in pairs), pairs)


def _on_512(prefix: int) -> int:
    return (prefix - 384) // 512 * 512 + 384


def test_reads_on_384_plus_512_k_make_that_grid_the_models() -> None:
    """The previous prompt, rounded down to 384 + 512·k, is each billed read (gpt-5.5's shape)."""
    pairs = [(prefix, _on_512(prefix)) for prefix in range(17_000, 40_000, 997)]
    g = _counts(pairs)
    assert exact(g)[2] == (512, 384, len(pairs), 1.0)
    assert listed(g) == (512, 384)


def test_reads_in_128_token_steps_keep_the_documented_grid() -> None:
    pairs = [(prefix, prefix // 128 * 128) for prefix in range(17_000, 40_000, 997)]
    assert listed(_counts(pairs)) is None


def test_a_mixture_of_grids_is_not_listed_even_where_the_coarser_wins() -> None:
    """gpt-5's shape on the development part: most reads on the coarser grid, the others on
    128-token steps; exact more often on the coarser, yet no grid of the model's."""
    pairs = [(p, _on_512(p) if k % 3 else p // 128 * 128) for k, p in enumerate(range(17_000, 60_000, 997))]
    g = _counts(pairs)
    by_step = {step: (hits, share) for step, _, hits, share in exact(g)}
    assert by_step[512][0] > by_step[128][0] and by_step[512][1] < 0.99
    assert listed(g) is None


def test_a_tie_keeps_the_finer_grid() -> None:
    """A read that every candidate grid gives (a multiple of 1,024, a prefix just above it) says
    nothing about the grid: the documented steps stay."""
    assert listed(_counts([(2048 + 5, 2048), (4096 + 9, 4096)])) is None


def test_the_naive_read_is_on_the_profiles_grid_of_the_model() -> None:
    cfg = profile("openai-auto")
    first, step = grid(cfg, "gpt-5.5", 1024)
    assert naive_read(17_545, 20_000, first, step) == 17_280  # ADIOCLASSMATE/dotfile, development part
    assert grid(cfg, "gpt-5", 1024) == grid(cfg, "gpt-5.4", 1024) == (1024, 128)
