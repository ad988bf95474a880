"""Routing of requests to per-machine (per-replica) caches.

- `prefix` (OpenAI ≤ 5.5, providers.md §2.1 [DOC O-PC-old]): "Requests are routed to a machine
  based on a hash of the initial prefix of the prompt … typically the first 256 tokens";
  `prompt_cache_key` "is combined with the prefix hash". Above "approximately 15 requests per
  minute" for one (prefix, key), "some may overflow and get routed to additional machines";
  "Each new machine is a one-time cache miss" [O-CB].
- `key` (Meta-style, H-22): requests sharing a `prompt_cache_key` go to the same replica; without
  a key they are spread over the replicas (load balancing, modelled as a uniform seeded draw).
- `single`: one cache, no routing.

The prefix hash is a splitmix64 chain over the blocks up to the one at which the running token
count reaches `route_tokens`, so it covers the first ~256 tokens at block granularity (found by
bisection); it is made once per distinct prefix (keyed by the transcript's own chain hash there).
"""

from __future__ import annotations

import bisect
import hashlib
import random
from collections import deque
from dataclasses import dataclass

from ctxbench.sim.core.chain import CHAIN_SEED, splitmix_chain
from ctxbench.sim.core.provider import Request

ROUTING_MODES = ("prefix", "key", "single")


def stable_hash(*parts: object) -> int:
    """A run-independent hash (Python's str hash is salted per process)."""
    data = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


@dataclass
class Route:
    replica: int
    home: int
    overflow: bool


class ReplicaRouter:
    def __init__(
        self,
        replicas: int,
        mode: str,
        rng: random.Random,
        route_tokens: int = 256,
        overflow_rpm: float | None = None,
        overflow_pool: int = 4,
        window: float = 60.0,
    ) -> None:
        if mode not in ROUTING_MODES:
            raise ValueError(f"unknown routing {mode!r}; valid: {', '.join(ROUTING_MODES)}")
        self.replicas = max(1, replicas)
        self.mode = mode if self.replicas > 1 else "single"
        self.rng = rng
        self.route_tokens = route_tokens
        self.overflow_rpm = overflow_rpm
        self.overflow_pool = max(1, min(overflow_pool, self.replicas))
        self.window = window
        self._recent: dict[object, deque[float]] = {}
        self._material: dict[int, int] = {}  # prefix chain hash -> its routing hash
        self._homes: dict[object, int] = {}  # routing material -> home replica

    def prefix_material(self, req: Request) -> int:
        """A hash of the prompt through the block where it passes `route_tokens` (or its last
        block): the splitmix64 chain of those blocks, made once per distinct prefix."""
        if req.n <= 0:
            return 0
        tr = req.tr
        pos = min(bisect.bisect_left(tr.cum_tokens, self.route_tokens, 0, req.n), req.n - 1)
        material = self._material.get(tr.hashes[pos])
        if material is None:
            material = CHAIN_SEED
            for b in tr.blocks[: pos + 1]:
                material = splitmix_chain(material, b.digest)
            self._material[tr.hashes[pos]] = material
        return material

    def route(self, req: Request, now: float) -> Route:
        if self.mode == "single":
            return Route(0, 0, False)
        if self.mode == "key":
            if req.cache_key is None:
                r = self.rng.randrange(self.replicas)
                return Route(r, r, False)
            material: object = ("key", req.cache_key)
        else:
            material = (self.prefix_material(req), req.cache_key or "")
        home = self._homes.get(material)
        if home is None:
            home = self._homes[material] = stable_hash(material) % self.replicas
        if self.overflow_rpm is None:
            return Route(home, home, False)
        q = self._recent.setdefault(material, deque())
        while q and q[0] <= now - self.window:
            q.popleft()
        over = len(q) >= self.overflow_rpm
        q.append(now)
        if not over or self.overflow_pool <= 1:
            return Route(home, home, False)
        step = 1 + self.rng.randrange(self.overflow_pool - 1)
        return Route((home + step) % self.replicas, home, True)
