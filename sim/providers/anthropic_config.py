"""The Anthropic prompt cache's options (`sim/providers/anthropic.py`), apart from the cache itself:
a config dataclass keeps its annotations (`Literal`, `tuple[...]`) for the preset and profile
checks (`sim/core/values.py`), which a compiled module would erase (`sim/core/native.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxbench.sim.core.provider import Faults, Latency


@dataclass(frozen=True)
class AnthropicConfig:
    lookback: int = 20  # A-PC 2026-08-22: "The lookback window is 20 blocks"
    max_breakpoints: int = 4  # A-PC: "Max 4 breakpoints per request"
    collapse_tool_runs: bool = False  # A-PC+ (after 2026-08-22): tool_use / tool_result runs = 1 position
    image_change_invalidates_messages: bool = True  # A-PC §1.6 table, "Images added/removed anywhere"
    max_entries: int | None = None  # best-effort capacity (LRU); None = unbounded
    random_evict_rate: float = 0.0  # best-effort eviction noise (§1.5 observed anomaly)
    # §1.6 row "Non-tool-result user content with thinking on": earlier thinking blocks stripped
    # (Haiku, Opus < 4.5, Sonnet < 4.6) or kept; None = per model (sim/providers/thinking.py)
    strip_thinking_on_user_content: bool | None = None
    # §1.3 "Block counting granularity ... UNCONFIRMED": an image that belongs to a tool result
    # (traces/FORMAT.md: it follows the tool_result) is nested in it on the wire, so it is not a
    # lookback position of its own (assumed; seen in traces-real cua sessions, bench/fidelity/replay.py)
    tool_result_images_nested: bool = False
    # §1.5 "refreshed ... each time the cached content is used": a read also refreshes the
    # entries at this request's breakpoints inside the read prefix (assumed reading of the doc;
    # seen in traces-real: a system-prompt entry read 11 min after it was written)
    refresh_marks_in_read: bool = False
    # A gateway in front of the API that reports no cache writes: they are billed (at the write
    # rate) but its usage counts them in the input (traces-real FORMATS.md §2.4, the Cline gateway:
    # cacheWriteTokens 0 throughout; sim/data/profiles/cline.yaml). The bill is unchanged; only the
    # usage the provider reports is (`reported_usage`).
    report_cache_writes: bool = True
    # With `report_cache_writes` off: whether the unreported writes are billed at the write rate
    # (the Cline gateway's own cost field does) or as the uncached input the usage shows (a relay
    # in front of Claude Code, priced as ccusage prices its log: sim/data/profiles/claude-relay.yaml).
    bill_unreported_writes: bool = True
    # §1.6 escape hatches: "`defer_loading` tools / tool search append `tool_reference` blocks
    # instead of changing the prefix" [DOC]: "append" (default). "first": the first deferred tool
    # in a request changes the rendered prefix from the tools on, further deferred tools do not
    # (a what-if: two of the three conversations of one Claude Code 2.1.114 session, traces-real
    # ef958aa1, billed it; on the corpus's development sessions such requests kept the prefix 45
    # times of 45, so the fidelity replay keeps "append": bench/fidelity/replay.py)
    deferred_tools_prefix: Literal["append", "first"] = "append"
    # Server-side lookup failures: a request reads only the system + tools prefix though a longer
    # entry is live and its prompt unchanged (intermittent, self-healing; the API's diagnostics
    # name it previous_message_not_found, anthropics/claude-code#87966). A per-request probability
    # (seeded; 0 = never) and scripted failures at (conversation, request index); the miss cause is
    # "server_lookup_failure". The rate the traces-real Claude Code logs show is in
    # bench/fidelity_report.md (not a default: 0 keeps the documented cache).
    lookup_failure_rate: float = 0.0
    lookup_failure_at: tuple[tuple[str, int], ...] = ()  # conversation "" = any conversation
    # Requests (conversation, index; "" = any) whose turn carried non-tool-result user content the
    # recorded log does not show (the IDE diagnostics Claude Code <= 2.0.x sends after an edit
    # without logging them, bench/fidelity/causes.py): on a model that strips thinking (§1.6) the
    # turn's earlier thinking is stripped, so the read stops at the turn's start (the end of the
    # last message with non-tool-result content). Taken from a bill by bench/fidelity/outside.py.
    read_to_turn_start_at: tuple[tuple[str, int], ...] = ()
    # §1.5 says a read refreshes an entry, not for how long when the reading mark's ttl differs
    # from the entry's: "entry" keeps the entry's own ttl (default), "reader" re-times it to the
    # ttl of the mark that found it (observed once: traces-real ef958aa1 main #10, a 1h entry a 5m
    # forked query of Claude Code 2.1.114 read was gone 432 s later, while the 1h entry before it,
    # not read by the fork, was live; bench/fidelity/replay.py OBSERVED)
    refresh_ttl: Literal["entry", "reader"] = "entry"
    # §1.5: "available once the first response begins" (0: readable at the writing request's first
    # token). > 0: an entry written by a request that read a cached prefix is readable only this
    # many seconds after that request started (a what-if knob: seen once on Opus 4.7, not on other
    # Opus 4.7 logs, so the fidelity replay leaves it at 0; bench/fidelity/replay.py)
    extension_readable_after: float = 0.0
    # Claude Code's billing-header system block (`x-anthropic-billing-header: cc_version=<v>.<fp>;
    # cc_entrypoint=...; [cch=...;]`, system[0], sim/content.BILLING_HEADER) is no part of the cache
    # key: the cache keys it as one fixed digest, so a prompt that differs only in that block hits
    # the same entries (True, default), or like any other content (False: what a third-party
    # prefix cache does, anthropics/claude-code#68900). Not documented; observed:
    # - traces-real spotter 258c7280 / 8463c716 (Claude Code 2.1.39, whose fingerprint changes at
    #   the compaction, `875` -> `a2f`, bench/claude_code_wire.md L238-246): the first request after
    #   each compaction reads 21,460 / 21,445 tokens, the tools + system prefix behind the changed
    #   block (traces-real FORMATS.md L94-96: "their size is visible as the cache read of the first
    #   request after a compaction (≈21.4k tokens in spotter)"), where a new session reads 17,842;
    # - traces-real claude-code-log ef958aa1 (2.1.114, entrypoint cli): every request reads the
    #   previous prompt to within 6 tokens, while Claude Code's `cch=` changes per request
    #   (anthropics/claude-code#68900 on 2.1.177: "cch=36ee5" then "cch=0aaa9" in one session;
    #   0% hits "on third-party providers"); the transcripts do not record the system prompt, so
    #   the header itself is not in the logs;
    # - BerriAI/litellm#29584 / #29572: the first-party API reads the block (it identifies Claude
    #   Code's subscription traffic; LiteLLM keeps it for Anthropic, strips it for Bedrock).
    # Against it: gateways that forge or re-compute the header themselves report misses on the
    # first-party API (diegosouzapw/OmniRoute#1638, EasyMetaAu/helm-api#478), so a header the API
    # does not accept as Claude Code's may well count as content.
    skip_billing_header: bool = True
    latency: Latency = field(default_factory=Latency)
    faults: Faults = field(default_factory=Faults)
