"""Anthropic Messages prompt cache (providers.md §1 and the §8 minimal algorithm).

- tools → system → messages; an entry is the chained hash of the prefix ending at a breakpoint,
  written only at breakpoints (≤ 4; a fifth is the API's 400) [A-PC §1.1-1.2];
- reads walk back at most `lookback` (20) positions per breakpoint, the breakpoint itself first;
  optionally a run of tool_use or tool_result blocks counts as one position [A-PC+ §1.3];
- per-model minimum cacheable prefix, silently uncached below it [§1.4];
- TTL 5m / 1h measured from the request's start, refreshed free on a read, and an entry is
  readable only once the writing request produced its first token [§1.5];
- adding or removing an image invalidates the messages-level cache [§1.6]: an entry inside the
  messages segment is readable only by a request whose images extend those of the request that
  wrote it (appending new images keeps it; replacing an old one by a placeholder breaks it);
- billing by the A/B/C rule of mixed TTLs [§1.8]; usage in the API's exact fields [§1.9];
- "prompt is too long: N tokens > M maximum" as a 400 invalid_request_error [§1.12];
- deferred tools (`defer_loading`) are no prefix position of their own [§1.6]; optionally the first
  one present changes the rendered prefix from the tools on (`deferred_tools_prefix`, a what-if);
- Claude Code's billing-header system block is keyed as one fixed digest (`skip_billing_header`,
  default on: a prompt that differs only in that block reads the same entries; the evidence is
  cited in AnthropicConfig);
- optionally, server-side lookup failures: a live entry past the system + tools prefix not found
  (`lookup_failure_rate`, `lookup_failure_at`; anthropics/claude-code#87966);
- optionally (observed, not documented): a read re-times the entry it hits to the reading mark's
  ttl (`refresh_ttl` "reader"), and an entry written on top of a read becomes readable only a
  while after its request started (`extension_readable_after`).

Per call the work is bounded by breakpoints × lookback dictionary probes: nothing grows with the
prompt.
"""

from __future__ import annotations

import random
from typing import Any

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.chain import chain
from ctxbench.sim.core.content import IMAGE, TOOL_RESULT, TOOL_USE, Block
from ctxbench.sim.core.names import TTL_SECONDS, Breakpoints, Ttl
from ctxbench.sim.core.provider import (
    Outcome,
    ProviderError,
    Request,
    Usage,
    price,
)
from ctxbench.sim.core.thinking import strips_thinking
from ctxbench.sim.providers.anthropic_config import AnthropicConfig
from ctxbench.sim.providers.dialects import ANTHROPIC, anthropic_wire_usage, fault_error, too_long
from ctxbench.sim.providers.thinking import ThinkingStripper, real_user

# The rendered prefix of a request that sends deferred tools, under `deferred_tools_prefix`
# "first": every position from the first deferred tool on is keyed apart (one fixed digest).
DEFERRED_TOOLS_DIGEST = 0x6465666572726564  # b"deferred"


class _Entry:
    __slots__ = ("expires", "img_count", "img_hash", "readable_at", "tokens", "ttl")

    def __init__(
        self, tokens: int, expires: float, readable_at: float, ttl: float, img_count: int, img_hash: int
    ):
        self.tokens = tokens
        self.expires = expires
        self.readable_at = readable_at
        self.ttl = ttl
        self.img_count = img_count
        self.img_hash = img_hash


def reported_usage(u: Usage, report_cache_writes: bool = True) -> Usage:
    """The usage a provider reports: as billed, or with the cache writes counted in the input by
    a gateway that does not report them (AnthropicConfig.report_cache_writes)."""
    if report_cache_writes:
        return u
    return Usage(u.uncached + u.cache_write, u.cache_read, 0, 0, u.output)


def _finder_ttl(breakpoints: Breakpoints, pos: int) -> Ttl:
    """The ttl of the mark whose lookback found the entry at `pos`: the first mark at or after it
    (marks are visited newest first, and a mark's walk stops at the first hit)."""
    return next((ttl for b, ttl in sorted(breakpoints) if b >= pos), "5m")


def _scripted(at: frozenset[tuple[str, int]], req: Request) -> bool:
    """Whether `req` is one of the scripted (conversation, index) pairs ("" = any conversation)."""
    return (req.conversation, req.index) in at or ("", req.index) in at


def _to_turn_start(req: Request, turn_starts: set[int]) -> Breakpoints:
    """One breakpoint at the turn's start, with the ttl of the request's last mark: the read of a
    request whose turn's thinking was stripped (`AnthropicConfig.read_to_turn_start_at`). The
    turn starts after the last message with non-tool-result user content, logged or not: an
    earlier such request's prompt end (its chain hash in `turn_starts`) counts as one; this
    request's is added. Scans the turn's messages only; unchanged when there is no such message."""
    tr, bps = req.tr, req.breakpoints
    if req.n <= 0:
        return bps
    out = bps
    for m in range(len(tr.messages) - 1, -1, -1):
        end = tr.message_end(m)
        if end <= req.n and (real_user(tr.messages[m]) or tr.hashes[end - 1] in turn_starts):
            out = ((end - 1, bps[-1][1] if bps else "5m"),)
            break
    turn_starts.add(tr.hashes[req.n - 1])
    return out


def _nested_image(blocks: list[Block], i: int) -> bool:
    """Block i is an image inside a tool result: the blocks before it, back to the first
    non-image, end at a tool_result (traces/FORMAT.md)."""
    if i >= len(blocks) or blocks[i].kind != IMAGE:
        return False
    while i > 0 and blocks[i - 1].kind == IMAGE:
        i -= 1
    return i > 0 and blocks[i - 1].kind == TOOL_RESULT


class AnthropicCache:
    """The cache state of one workspace and model, with the §8 lookup/write algorithm."""

    def __init__(self, cfg: AnthropicConfig, min_cacheable: int, rng: random.Random) -> None:
        self.cfg = cfg
        self.min_cacheable = min_cacheable
        self.rng = rng
        self.entries: dict[int, _Entry] = {}
        self.evicted: set[int] = set()
        self.failed_lookup: tuple[str, int] | None = None  # the request whose lookup failed last
        self._fail_at = frozenset(cfg.lookup_failure_at)
        self._turn_start_at = frozenset(cfg.read_to_turn_start_at)
        self._turn_starts: set[int] = set()  # prompt ends of those requests (chain hashes)

    def _salt_from(self, req: Request) -> int:
        """First position keyed apart because the request sends deferred tools (-1: none)."""
        return req.tr.first_deferred if self.cfg.deferred_tools_prefix == "first" else -1

    def _header_from(self, req: Request) -> tuple[int, int]:
        """(position, hash delta) of the request's billing-header block when the key leaves it
        out ((-1, 0): none, or the block counts as content)."""
        tr = req.tr
        return (tr.header_pos, tr.header_delta) if self.cfg.skip_billing_header else (-1, 0)

    def _key(self, req: Request, pos: int, salt: int | None = None) -> int:
        """The cache key of the prefix ending at `pos`, as this request renders it (`salt`: the
        request's `_salt_from`, when the caller has it)."""
        h = req.tr.hashes[pos]
        hp, hd = self._header_from(req)
        if 0 <= hp <= pos:
            h += hd
        salt = self._salt_from(req) if salt is None else salt
        return chain(h, DEFERRED_TOOLS_DIGEST) if 0 <= salt <= pos else h

    def _lookup_fails(self, req: Request) -> bool:
        """A server-side lookup failure for this request (scripted, else drawn at the rate)."""
        if _scripted(self._fail_at, req):
            return True
        rate = self.cfg.lookup_failure_rate
        return rate > 0.0 and self.rng.random() < rate

    def _previous_position(self, req: Request, pos: int) -> int:
        """The position before `pos`; a run of tool_use or tool_result blocks counts as one
        position when `collapse_tool_runs` is on (A-PC+)."""
        if self.cfg.collapse_tool_runs:
            blocks = req.tr.blocks
            k = blocks[pos].kind
            if k in (TOOL_USE, TOOL_RESULT):
                while pos - 1 >= 0 and blocks[pos - 1].kind == k:
                    pos -= 1
        return pos - 1

    def _step_back(self, req: Request, pos: int) -> int:
        """The previous lookback position under `collapse_tool_runs` and
        `tool_result_images_nested` (a tool_result and the images after it are one position)."""
        q = self._previous_position(req, pos) if self.cfg.collapse_tool_runs else pos - 1
        if self.cfg.tool_result_images_nested:
            blocks = req.tr.blocks
            while q >= 0 and _nested_image(blocks, q + 1):
                q -= 1
        return q

    def _readable(self, e: _Entry, req: Request, pos: int, now: float) -> bool:
        if e.expires <= now or e.readable_at > now:
            return False
        if self.cfg.image_change_invalidates_messages and pos >= req.tr.system_end:
            return e.img_count <= req.images and req.tr.img_hashes[e.img_count] == e.img_hash
        return True

    def lookup(self, req: Request, now: float) -> tuple[int, int]:
        """Longest readable entry over all breakpoints' lookback windows: (tokens, position).

        Breakpoints are visited newest first; one whose own prefix is no longer than the best hit
        so far cannot improve it and is skipped.
        """
        best, best_pos = 0, -1
        hashes, cum, entries = req.tr.hashes, req.tr.cum_tokens, self.entries
        lookback, collapse = self.cfg.lookback, self.cfg.collapse_tool_runs
        step = collapse or self.cfg.tool_result_images_nested
        salt = self._salt_from(req)
        hp, hd = self._header_from(req)
        breakpoints = req.breakpoints
        if (self._fail_at or self.cfg.lookup_failure_rate) and self._lookup_fails(req):
            # only the system + tools prefix is found
            self.failed_lookup = (req.conversation, req.index)
            breakpoints = tuple(bp for bp in breakpoints if bp[0] < req.tr.system_end)
        elif self._turn_start_at and _scripted(self._turn_start_at, req):
            breakpoints = _to_turn_start(req, self._turn_starts)
        for b, _ttl in reversed(breakpoints):
            if cum[b] <= best:
                continue
            pos, checked = b, 0
            # positions at or before the best hit cannot improve it; probing them again would also
            # draw best-effort eviction a second time on an entry already read (and lose it)
            while pos > best_pos and checked < lookback:
                h = hashes[pos] + hd if 0 <= hp <= pos else hashes[pos]
                if 0 <= salt <= pos:
                    h = chain(h, DEFERRED_TOOLS_DIGEST)
                e = entries.get(h)
                if e is not None and self._readable(e, req, pos, now):
                    if self.cfg.random_evict_rate and self.rng.random() < self.cfg.random_evict_rate:
                        del entries[h]
                        self.evicted.add(h)
                    else:
                        if cum[pos] > best:
                            best, best_pos = cum[pos], pos
                        break
                checked += 1
                pos = self._step_back(req, pos) if step else pos - 1
        return best, best_pos

    def commit(self, req: Request, now: float, ttft: float, read: int, read_pos: int) -> tuple[Usage, int]:
        """Refresh the hit, write entries at breakpoints past it; bill by the A/B/C rule (§1.8)."""
        tr, cum = req.tr, req.tr.cum_tokens
        salt = self._salt_from(req)
        if read_pos >= 0:
            e = self.entries[self._key(req, read_pos, salt)]
            if self.cfg.refresh_ttl == "reader":
                e.ttl = TTL_SECONDS[_finder_ttl(req.breakpoints, read_pos)]
            e.expires = now + e.ttl
            if self.cfg.max_entries is not None:
                self._touch(self._key(req, read_pos, salt), e)
            if self.cfg.refresh_marks_in_read:
                for b, _ttl in req.breakpoints:
                    inner = self.entries.get(self._key(req, b, salt)) if b < read_pos else None
                    if inner is not None and self._readable(inner, req, b, now):
                        inner.expires = max(inner.expires, now + inner.ttl)
        img_count = req.images
        img_hash = tr.img_hashes[img_count]
        ready = max(ttft, self.cfg.extension_readable_after) if read > 0 else ttft
        top_1h = read
        top = read
        top_pos = read_pos
        for b, ttl in req.breakpoints:
            tokens = cum[b]
            if tokens <= read or tokens < self.min_cacheable:
                continue
            secs = TTL_SECONDS[ttl]
            h = self._key(req, b, salt)
            e = _Entry(tokens, now + secs, now + ready, secs, img_count, img_hash)
            self.entries.pop(h, None)
            self.entries[h] = e
            self.evicted.discard(h)
            if ttl == "1h":
                top_1h = max(top_1h, tokens)
            if tokens > top:
                top, top_pos = tokens, b
        if self.cfg.max_entries is not None:
            self._enforce_capacity()
        total = req.input_tokens
        # uncached, cache read, 5m write, 1h write, output (by position: cheaper than by name per call)
        usage = Usage(total - top, read, top - top_1h, top_1h - read, req.output_tokens)
        return usage, top_pos

    def _touch(self, h: int, e: _Entry) -> None:
        if self.cfg.max_entries is not None:  # LRU order = dict insertion order
            del self.entries[h]
            self.entries[h] = e

    def _enforce_capacity(self) -> None:
        cap = self.cfg.max_entries
        while cap is not None and len(self.entries) > cap:
            h = next(iter(self.entries))
            del self.entries[h]
            self.evicted.add(h)

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        h = self._key(req, pos)
        if h in self.evicted:
            return "evicted"
        e = self.entries.get(h)
        if e is None and 0 <= self._salt_from(req) <= pos and self._key(req, pos, -1) in self.entries:
            return "tools_change"  # `deferred_tools_prefix` "first": the deferred tools re-keyed it
        if e is None:
            return "below_minimum" if req.tr.cum_tokens[pos] < self.min_cacheable else "not_written"
        if self.failed_lookup == (req.conversation, req.index):  # (this request may have re-written it)
            return "server_lookup_failure"
        if e.expires <= now:
            return "ttl_expiry"
        if e.readable_at > now:
            return "not_ready"
        if not self._readable(e, req, pos, now):
            return "image_change"
        return "lookback_exceeded"


class AnthropicProvider:
    """Claude Messages API model: cache, window, prices, faults and latency."""

    def __init__(self, model: ModelInfo, prices: Prices, cfg: AnthropicConfig | None = None, seed: int = 0):
        self.name = "anthropic"
        self.model = model
        self.prices = prices
        self.cfg = cfg or AnthropicConfig()
        self.rng = random.Random(seed)
        self.cache = AnthropicCache(self.cfg, model.min_cacheable, self.rng)
        strip = self.cfg.strip_thinking_on_user_content
        self.stripper: ThinkingStripper | None = None
        if strip or (strip is None and strips_thinking(model.name)):
            self.stripper = ThinkingStripper()

    def _error(self, req: Request, err: ProviderError) -> Outcome:
        u = Usage(uncached=req.input_tokens, output=0) if err.billed else Usage()
        return Outcome(u, price(self.prices, u), self.cfg.latency.base_ttft, self.cfg.latency.base_ttft, err)

    def call(self, req: Request, now: float) -> Outcome:
        if self.stripper is None:
            return self._call(req, now)
        eff, mp = self.stripper.view(req)  # §1.6: the prompt as the API sees it, thinking stripped
        out = self._call(eff, now)
        out.cached_pos = mp.to_src(out.cached_pos) if out.cached_pos >= 0 else -1
        return out

    def _price(self, u: Usage) -> float:
        """What `u` costs: as billed, or as reported by a gateway that bills what it reports
        (AnthropicConfig.bill_unreported_writes)."""
        if self.cfg.report_cache_writes or self.cfg.bill_unreported_writes:
            return price(self.prices, u)
        return price(self.prices, reported_usage(u, False))

    def _call(self, req: Request, now: float) -> Outcome:
        if len(req.breakpoints) > self.cfg.max_breakpoints:
            msg = (
                f"A maximum of {self.cfg.max_breakpoints} blocks with cache_control may be provided. "
                f"Found {len(req.breakpoints)}."
            )
            return self._error(req, ProviderError(400, "invalid_request_error", msg, "invalid", False))
        total = req.input_tokens
        if total > self.model.window:
            return self._error(req, too_long(ANTHROPIC, total, self.model.window))
        fault = self.cfg.faults.draw(req.index, self.rng, now)
        if fault is not None and fault != "stream_error":
            return self._error(req, fault_error(ANTHROPIC, fault, self.cfg.faults.retry_after))
        read, read_pos = self.cache.lookup(req, now)
        ttft = self.cfg.latency.ttft(total - read)
        usage, top_pos = self.cache.commit(req, now, ttft, read, read_pos)
        lat = self.cfg.latency
        if fault == "stream_error":  # cut off after the first token: input billed, no output
            err = fault_error(ANTHROPIC, fault, None)
            cut = Usage(usage.uncached, usage.cache_read, usage.cache_write_5m, usage.cache_write_1h, 0)
            return Outcome(cut, self._price(cut), ttft, ttft, err, top_pos, "", self._wire)
        return Outcome(
            usage,
            self._price(usage),
            ttft,
            ttft + usage.output / lat.output_tps,
            None,
            top_pos,
            "",
            self._wire,
        )

    def _wire(self, usage: Usage) -> dict[str, Any]:
        """Usage in the Messages API's fields, as this provider reports it (Outcome.wire_of)."""
        return anthropic_wire_usage(reported_usage(usage, self.cfg.report_cache_writes))

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        if self.stripper is not None:
            eff, mp = self.stripper.view(req)
            q = mp.to_eff(pos)
            if q < 0:
                return "prefix_change"
            cause = self.cache.diagnose(eff, q, now)
            return "prefix_change" if cause == "not_written" else cause
        return self.cache.diagnose(req, pos, now)
