"""The chain hash that identifies a prompt prefix: one value per block, from the previous block's
value and the block's own content digest (DESIGN.md, vLLM's block-hash chain), so that equal
values mean equal prefixes. Used by `sim/transcript.py` (one chain per conversation), the
providers and the replica routing."""

from __future__ import annotations

CHAIN_SEED = 0x243F6A8885A308D3  # fixed seed: same content → same hashes in every run

_M64 = (1 << 64) - 1
_R = 0x9E3779B97F4A7C15  # odd, so invertible mod 2⁶⁴


def chain(parent: int, digest: int) -> int:
    """h_i = hash((h_{i-1}, d_i)): CPython's tuple hash (xxHash's 64-bit round over the two ints'
    hashes, each its value mod 2⁶¹-1; ints are not salted by PYTHONHASHSEED, so every run gets the
    same values) over the blocks' random 64-bit content digests. ~10⁻⁸ collision odds at 3·10⁵
    entries (61-bit inputs), like the polynomial chain h_{i-1}·R + d_i mod 2⁶⁴ of performance.md
    B4 variant (c) it replaces, at about half the cost: that one multiplies 64-bit ints into a
    128-bit one per block, ~120 ns in CPython 3.11 against ~60 ns here, and an edit re-hashes every
    block after it (issue 13). Which chain is used changes no record (only equality is read)."""
    return hash((parent, digest))


def splitmix_chain(parent: int, digest: int) -> int:
    """h_i = mix(h_{i-1}·R + d_i mod 2⁶⁴): a polynomial chain with a splitmix64 finaliser, for the
    replica routing hash (`providers/routing.py`), whose values pick replicas and so must not
    change."""
    x = (parent * _R + digest) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)
