"""A naive reference: the same simulation, plus a full re-hash of every whole prompt per request.

This is what a mock provider without incremental state does (research/performance.md B4 variant
(a), vLLM-faithful): render the whole prompt as tokens (int32 ids, 4 bytes each; a block's ids are
derived from its digest, so equal blocks give equal ids) and hash it in 16-token blocks with a
sha256 chain, then find the longest cached prefix linearly. The speed suite runs it on the same
trace and policy as the real simulator, so both see exactly the same requests.
"""

from __future__ import annotations

import hashlib

from ctxbench.policies.preset import Policy
from ctxbench.sim.core.content import Block
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.runner import RunResult, run_prepared

BLOCK_TOKENS = 16  # vLLM's default block size (performance.md B3)


def block_token_bytes(b: Block) -> bytes:
    """`b.tokens` int32 ids derived from the block's digest."""
    seed = b.digest.to_bytes(8, "little")
    return (seed * ((b.tokens + 1) // 2))[: b.tokens * 4]


class NaiveRehash:
    """Re-hashes each whole prompt from its blocks, every request, with no state but the cache."""

    def __init__(self) -> None:
        self.cache: set[bytes] = set()
        self.hit_blocks = 0

    def __call__(self, req: Request, out: Outcome) -> None:
        data = b"".join(block_token_bytes(b) for b in req.tr.blocks[: req.n])
        step = BLOCK_TOKENS * 4
        parent = b"none-hash-seed"
        hashes = []
        for i in range(0, len(data) - step + 1, step):
            parent = hashlib.sha256(parent + data[i : i + step]).digest()
            hashes.append(parent)
        hit = 0
        for h in hashes:
            if h not in self.cache:
                break
            hit += 1
        self.cache.update(hashes[hit:])
        self.hit_blocks += hit


def naive_run(trace: PreparedTrace, policy: Policy) -> RunResult:
    return run_prepared([trace], policy, on_call=NaiveRehash())
