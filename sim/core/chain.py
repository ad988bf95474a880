"""The hash that identifies a prompt prefix: one value per block, from the previous block's value
and the block's own content digest and rank (DESIGN.md, vLLM's block-hash chain), so that equal
values mean equal prefixes; and the appended-only chains. Used by `sim/core/transcript.py` (one prefix
hash per block of a conversation), the providers and the replica routing."""

from __future__ import annotations

CHAIN_SEED = 0x243F6A8885A308D3  # fixed seed: same content → same hashes in every run


def prefix_term(rank: int, digest: int) -> int:
    """What one block adds to the prefix hash of a transcript (`Transcript.hashes`): the value
    for the prefix ending at block i is CHAIN_SEED + the sum of the terms of blocks 0..i, a block's
    term being the tuple hash of its rank (how many blocks before it are part of the prefix) and
    its content digest. The rank makes the sum order-sensitive: equal values mean equal block
    sequences (~2⁻⁶⁴ odds per pair of distinct prefixes; ints are not salted by PYTHONHASHSEED,
    so every run gets the same values). A sum rather than a chain h_i = hash((h_{i-1}, d_i)): the
    same cost per appended block, but an edit that swaps blocks in place (masking, image
    eviction) moves every later value by one constant, added in C, instead of hashing every
    later block again (issue 13). Only equality is read, so the scheme changes no record."""
    return hash((rank, digest))

_M64 = (1 << 64) - 1
_R = 0x9E3779B97F4A7C15  # odd, so invertible mod 2⁶⁴


def chain(parent: int, digest: int) -> int:
    """h_i = hash((h_{i-1}, d_i)), for chains that are only ever appended to (the image chain, a
    salt on a prefix hash): CPython's tuple hash (xxHash's 64-bit round over the two ints'
    hashes, each its value mod 2⁶¹-1; ints are not salted by PYTHONHASHSEED, so every run gets the
    same values) over the blocks' random 64-bit content digests. ~10⁻⁸ collision odds at 3·10⁵
    entries (61-bit inputs), like the polynomial chain h_{i-1}·R + d_i mod 2⁶⁴ of performance.md
    B4 variant (c) it replaces, at about half the cost: that one multiplies 64-bit ints into a
    128-bit one per block, ~120 ns in CPython 3.11 against ~60 ns here. Which chain is used changes
    no record (only equality is read)."""
    return hash((parent, digest))


def splitmix_chain(parent: int, digest: int) -> int:
    """h_i = mix(h_{i-1}·R + d_i mod 2⁶⁴): a polynomial chain with a splitmix64 finaliser, for the
    replica routing hash (`providers/routing.py`), whose values pick replicas and so must not
    change."""
    x = (parent * _R + digest) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)
