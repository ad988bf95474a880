"""Models whose billed reads fall on a grid of their own (bench/fidelity/auto.py `grid_of`, the
profiles' `read_units`), and the naive reading on that grid (`grid`)."""

from __future__ import annotations

from collections import Counter

from ctxbench.bench.fidelity.auto import grid, grid_of, naive_read
from ctxbench.sim.core.profiles import profile


def test_reads_all_on_one_residue_of_512_are_a_512_token_grid() -> None:
    reads = Counter({384 + 512 * k: 2 for k in range(3, 15)})
    assert grid_of(reads) == (512, 384, 1.0)


def test_reads_in_128_token_steps_are_no_grid_of_their_own() -> None:
    assert grid_of(Counter({128 * k: 3 for k in range(10, 30)})) is None


def test_too_few_reads_or_one_prefix_read_again_and_again_are_no_grid() -> None:
    assert grid_of(Counter({384 + 512 * k: 1 for k in range(3, 13)})) is None  # 10 reads
    assert grid_of(Counter({5_504: 40})) is None  # one cached prefix, read 40 times


def test_one_read_off_the_grid_in_a_hundred_keeps_it() -> None:
    reads = Counter({384 + 512 * k: 10 for k in range(3, 13)})
    assert grid_of(reads) == (512, 384, 1.0)
    reads[20_000] += 1
    assert grid_of(reads) == (512, 384, 100 / 101)
    reads[21_000] += 1
    assert grid_of(reads) is None


def test_the_naive_read_of_gpt_5_5_is_on_its_grid() -> None:
    cfg = profile("openai-auto")
    first, step = grid(cfg, "gpt-5.5", 1024)
    assert naive_read(17_545, 20_000, first, step) == 17_280
    assert grid(cfg, "gpt-5.4", 1024) == (1024, 128)
