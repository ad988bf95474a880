"""True token counts: the provider's tokenizer model, kept apart from any harness estimate.

Text is counted exactly with an offline tokenizer when one is installed and the trace carries the
text (`toktok-rs`, byte-identical to tiktoken o200k/cl100k: research/ecosystem.md §1.3); otherwise
with a calibrated bytes-per-token rate per content kind (o200k measured 4.48 B/token on English,
4.16 on code, 3.10 on JSON/Unicode tool output: research/ecosystem.md §1.6). No Claude 3+ tokenizer
exists offline (ecosystem.md §1.5), so Claude profiles use rates, scaled where a provider documents
a denser tokenizer (Opus 4.7+ ≈ +30 %: providers.md §1.14).

Image tokens follow each provider's rule (`image_tokens`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Protocol

from ctxbench.sim.core.content import IMAGE, TEXT, TOOL_DEF, Block, digest64, make_block, text_digest

# research/ecosystem.md §1.6: bytes per token of o200k_base by kind of text.
DEFAULT_RATES: dict[str, float] = {"prose": 4.48, "code": 4.16, "json": 3.10}


class TokenCounter(Protocol):
    """Counts the true tokens of a text (exact) or of a size (calibrated)."""

    @property
    def name(self) -> str: ...

    def count_text(self, text: str, lang: str) -> int: ...

    def count_bytes(self, nbytes: int, lang: str) -> int: ...


@dataclass(frozen=True)
class RateCounter:
    """Calibrated bytes-per-token per kind of text, times a tokenizer density scale."""

    rates: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    scale: float = 1.0
    name: str = "rate"

    def count_bytes(self, nbytes: int, lang: str) -> int:
        if nbytes <= 0:
            return 0
        rate = self.rates.get(lang, self.rates["prose"])
        return max(1, math.ceil(nbytes / rate * self.scale))

    def count_text(self, text: str, lang: str) -> int:
        return self.count_bytes(len(text.encode("utf-8")), lang)


@dataclass(frozen=True)
class ToktokCounter:
    """Exact o200k/cl100k counts through `toktok-rs` (optional extra `tokenizers`)."""

    encoding: str = "o200k_base"
    fallback: RateCounter = field(default_factory=RateCounter)
    name: str = "toktok"

    def count_text(self, text: str, lang: str) -> int:
        import toktok

        return int(toktok.batch_count([text], self.encoding)[0])

    def count_bytes(self, nbytes: int, lang: str) -> int:
        return self.fallback.count_bytes(nbytes, lang)


def toktok_available() -> bool:
    try:
        import toktok  # noqa: F401
    except ImportError:
        return False
    return True


# `--tokenizer` choices: the calibrated rate, or an exact offline encoding (toktok-rs).
TOKENIZERS: dict[str, str | None] = {"rate": None, "o200k": "o200k_base", "cl100k": "cl100k_base"}


def make_counter(kind: str = "rate", encoding: str = "o200k_base", scale: float = 1.0) -> TokenCounter:
    """Build a counter: `rate`, `o200k` or `cl100k` (`--tokenizer`; the exact ones need the
    `tokenizers` extra and raise ModuleNotFoundError naming `toktok` when it is absent), or a
    provider profile's `toktok`, which falls back to rates if absent."""
    rates = RateCounter(scale=scale)
    if kind in ("o200k", "cl100k"):
        if not toktok_available():
            raise ModuleNotFoundError(f"--tokenizer {kind} needs toktok-rs", name="toktok")
        return ToktokCounter(str(TOKENIZERS[kind]), rates, name=kind)
    if kind == "toktok" and toktok_available():
        return ToktokCounter(encoding, rates)
    if kind not in ("rate", "toktok"):
        from ctxbench.sim.core.values import unknown

        raise ValueError(unknown("tokenizer", kind, TOKENIZERS, "valid"))
    return rates


# ---------------------------------------------------------------- image rules
def anthropic_image_tokens(width: int, height: int, max_edge: int = 1568, max_tokens: int = 1568) -> int:
    """⌈w/28⌉·⌈h/28⌉ after the aspect-preserving downscale that satisfies both caps
    (providers.md §1.13: standard tier 1568 px / 1568 tokens, Claude 4.7+ 2576 px / 4784)."""
    if width <= 0 or height <= 0:
        return 0

    def cost(w: int, h: int) -> int:
        return math.ceil(w / 28) * math.ceil(h / 28)

    def fits(w: int, h: int) -> bool:
        return (
            math.ceil(w / 28) * 28 <= max_edge
            and math.ceil(h / 28) * 28 <= max_edge
            and cost(w, h) <= max_tokens
        )

    if fits(width, height):
        return cost(width, height)
    long_edge = max(width, height)
    lo, hi = 1, long_edge
    while lo < hi:  # largest long edge whose scaled image fits (the doc's binary search)
        mid = (lo + hi + 1) // 2
        s = mid / long_edge
        if fits(max(1, round(width * s)), max(1, round(height * s))):
            lo = mid
        else:
            hi = mid - 1
    s = lo / long_edge
    return cost(max(1, round(width * s)), max(1, round(height * s)))


def legacy_image_tokens(width: int, height: int) -> int:
    """Legacy Anthropic rule w·h/750 (providers.md §1.13, docs up to mid-2026)."""
    return math.ceil(width * height / 750)


def openai_tile_tokens(width: int, height: int, base: int = 85, tile: int = 170) -> int:
    """Tile models, detail high: fit 2048², shortest side → 768, 512-px tiles (providers.md §2.6)."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > 768:
        s = 768 / min(w, h)
        w, h = w * s, h * s
    return base + tile * math.ceil(w / 512) * math.ceil(h / 512)


def openai_patch_tokens(width: int, height: int, multiplier: float = 1.2, max_patches: int = 2500) -> int:
    """Patch models: ⌈w/32⌉·⌈h/32⌉ within the patch budget, times the model multiplier (§2.6)."""
    w, h = float(width), float(height)
    patches = math.ceil(w / 32) * math.ceil(h / 32)
    if patches > max_patches:
        s = math.sqrt(32 * 32 * max_patches / (w * h))
        w, h = math.floor(w * s / 32) * 32 or 32, math.floor(h * s / 32) * 32 or 32
        patches = math.ceil(w / 32) * math.ceil(h / 32)
    return math.ceil(patches * multiplier)


def gemini_image_tokens(width: int, height: int) -> int:
    """≤384² → 258, else 768² tiles × 258 (providers.md §3, 3P quoting Google)."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def glm_image_tokens(width: int, height: int, factor: int = 28, lo: int = 16, hi: int = 8000) -> int:
    """GLM-5.3's dynamic patch processor: 14-px patches merged 2x2 (one token per 28x28 px),
    16..8,000 tokens per image (docs.nvidia.com/nemo/automodel .../glm5_next/image_processing:
    patch_size 14, merge_size 2, min_image_tokens 16, max_image_tokens 8000). Its smart_resize
    ("an aligned H/W canvas inside the configured token budget") is taken to round as Qwen2-VL's
    does (each side to the nearest multiple of 28, scaled into the budget): assumed, the page does
    not spell the rounding out. 1280x720 -> 46x26 = 1,196 tokens; 1920x1080 -> 69x39 = 2,691."""
    if width <= 0 or height <= 0:
        return 0
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > hi * factor * factor:
        beta = math.sqrt(height * width / (hi * factor * factor))
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < lo * factor * factor:
        beta = math.sqrt(lo * factor * factor / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return (h // factor) * (w // factor)


IMAGE_RULES = {
    "anthropic": anthropic_image_tokens,
    "anthropic-highres": lambda w, h: anthropic_image_tokens(w, h, 2576, 4784),
    "anthropic-legacy": legacy_image_tokens,
    "openai-tile": openai_tile_tokens,
    "openai-patch": openai_patch_tokens,
    "gemini": gemini_image_tokens,
    "glm": glm_image_tokens,
}


@functools.lru_cache(maxsize=4096)
def image_tokens(rule: str, width: int, height: int) -> int:
    """`IMAGE_RULES[rule](width, height)`, remembered: a trace repeats a few image sizes thousands
    of times, and the Anthropic rule is a binary search."""
    return IMAGE_RULES[rule](width, height)


# ---------------------------------------------------------------- block factory
@dataclass(frozen=True)
class BlockFactory:
    """Makes blocks with true tokens for one provider's tokenizer and image rule."""

    counter: TokenCounter = field(default_factory=RateCounter)
    image_rule: str = "anthropic"

    def text(
        self,
        role: str,
        text: str | None = None,
        nbytes: int = 0,
        key: str = "",
        kind: str = TEXT,
        lang: str = "prose",
        tokens: int | None = None,
        **flags: object,
    ) -> Block:
        """A text-like block from full text, or from a size plus a content key (synthetic traces)."""
        if text is not None:
            raw = text.encode("utf-8")
            nbytes = len(raw)
            dig = text_digest(kind, role, str(flags.get("name", "")), str(flags.get("tool_id", "")), raw)
            if tokens is not None:
                n = tokens
            elif isinstance(self.counter, RateCounter):  # the same count, without encoding twice
                n = self.counter.count_bytes(nbytes, lang)
            else:
                n = self.counter.count_text(text, lang)
        else:
            dig = digest64(kind.encode(), role.encode(), key.encode(), str(nbytes).encode())
            n = tokens if tokens is not None else self.counter.count_bytes(nbytes, lang)
        return make_block(kind, role, nbytes, n, dig, text=text, **flags)  # Block(...), cheaper

    def image(
        self,
        role: str,
        width: int,
        height: int,
        nbytes: int,
        key: str,
        tokens: int | None = None,
        **flags: object,
    ) -> Block:
        """An image block: its tokens by the factory's pixel rule, unless given (an imported log
        that bills the image elsewhere, traces/FORMAT.md `tokens`)."""
        n = image_tokens(self.image_rule, width, height) if tokens is None else tokens
        dig = digest64(IMAGE.encode(), key.encode(), f"{width}x{height}:{nbytes}".encode())
        return make_block(IMAGE, role, nbytes, n, dig, width=width, height=height, **flags)

    def tool_def(
        self, name: str, schema_json: str | None = None, nbytes: int = 0, deferred: bool = False
    ) -> Block:
        """A tool definition. A deferred one (Anthropic `defer_loading`) is sent but not rendered
        where it is listed: 0 tokens there (providers.md §1.6; traces/FORMAT.md `tools`)."""
        return self.text(
            "tools", schema_json, nbytes, key=name, kind=TOOL_DEF, lang="json",
            tokens=0 if deferred else None, name=name, deferred=deferred,
        )  # fmt: skip
