"""Lines a Claude Code log could hold, for the fuzz tests of the raw-log counts (bench/fidelity/
raw_logs.py and its users): text that is no JSON, and JSON objects, lists and scalars nested a few
levels with the keys those counts read."""

from __future__ import annotations

import json

from hypothesis import strategies as st

KEYS = (
    "type", "subtype", "message", "usage", "content", "timestamp", "id", "isMeta", "isSidechain",
    "compactMetadata", "preTokens", "trigger", "version",
)  # fmt: skip
_LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_JSON = st.recursive(
    _LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
LOG_LINES = st.lists(st.one_of(st.text(max_size=40), _JSON.map(json.dumps)), max_size=12)
