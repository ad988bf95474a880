"""Token estimators: what the harness believes the next request's size is (never the truth)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctxbench.policies.view import View
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.values import Tokens


@register("estimator", "anchored")
@dataclass(frozen=True)
class AnchoredEstimator:
    """Text bytes ÷ `bytes_per_token` + `image_tokens` per image, anchored on reported usage.

    Defaults are H's: bytes/2.5 with tool definitions included and 4,096 per image (H-12);
    after each reply, the provider-reported count plus an estimate of what was added since, and
    removed content is never subtracted (H-13). With `anchor` false, or before any trustworthy
    report, the whole transcript is estimated (C-4's fallback).
    """

    bytes_per_token: float = 2.5  # H-12
    image_tokens: Tokens = 4096  # H-12
    anchor: bool = True  # H-13

    def whole(self, view: View) -> int:
        tr = view.tr
        return math.ceil(tr.total_bytes / self.bytes_per_token) + tr.total_images * self.image_tokens

    def estimate(self, view: View) -> int:
        a = view.anchor
        if not self.anchor or a is None or not a.trustworthy:
            return self.whole(view)
        tr = view.tr
        added = math.ceil(max(0, tr.added_bytes - a.added_bytes) / self.bytes_per_token)
        return a.tokens + added + max(0, tr.added_images - a.added_images) * self.image_tokens


@register("estimator", "exact")
@dataclass(frozen=True)
class ExactEstimator:
    """The harness counts with the provider's own tokenizer: the estimate is the true token count
    of the request as built (text through `--tokenizer o200k|cl100k` when the trace has text,
    images by the provider's rule). The yardstick the byte-rate estimators are measured against:
    under it a run's estimate error is zero by construction."""

    def whole(self, view: View) -> int:
        return view.tr.total_tokens

    def estimate(self, view: View) -> int:
        return view.tr.total_tokens
