"""True token counts: the documented image examples and the tokenizer interface."""

from __future__ import annotations

import pytest

from ctxbench.sim.core.tokens import (
    BlockFactory,
    RateCounter,
    anthropic_image_tokens,
    legacy_image_tokens,
    make_counter,
    openai_tile_tokens,
    toktok_available,
)


@pytest.mark.parametrize(
    ("w", "h", "standard", "highres"),
    [(1000, 1000, 1296, 1296), (1920, 1080, 1560, 2691), (3840, 2160, 1560, 4784), (1280, 720, 1196, 1196)],
)
def test_anthropic_image_examples(w: int, h: int, standard: int, highres: int) -> None:
    """providers.md §1.13: 1000² → 1296 both tiers; 1920×1080 → 1560 / 2691; 3840×2160 → 1560 / 4784."""
    assert anthropic_image_tokens(w, h) == standard
    assert anthropic_image_tokens(w, h, 2576, 4784) == highres


def test_legacy_and_openai_rules() -> None:
    assert legacy_image_tokens(1092, 1092) == 1590  # providers.md §1.13: 1092² ≈ 1590 tokens
    assert openai_tile_tokens(1024, 1024) == 765  # providers.md §2.6: gpt-4o high 85 + 4·170


def test_rate_counter_uses_calibrated_rates_per_kind() -> None:
    c = RateCounter()
    assert c.count_bytes(4480, "prose") == 1000  # 4.48 B/token (ecosystem.md §1.6)
    assert c.count_bytes(3100, "json") == 1000
    assert RateCounter(scale=1.3).count_bytes(4480, "prose") == 1300


def test_block_factory_digests_content_not_position() -> None:
    f = BlockFactory()
    a = f.text("user", "hello world")
    b = f.text("user", "hello world")
    c = f.text("user", "hello world!")
    assert a.digest == b.digest != c.digest
    assert f.image("user", 1280, 720, 1000, "k1").tokens == 1196


@pytest.mark.skipif(not toktok_available(), reason="toktok-rs (extra 'tokenizers') is not installed")
def test_toktok_counts_exactly() -> None:
    c = make_counter("toktok")
    assert c.name == "toktok"
    assert c.count_text("hello world", "prose") == 2  # o200k_base: "hello", " world"
