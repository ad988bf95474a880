"""Whether a Claude model strips the thinking blocks of earlier turns from the prompt it caches
(Anthropic's "extended thinking" docs: thinking of previous assistant turns is removed on older
models, kept on newer ones; see `strips_thinking`). A rule on the model's name, apart from the
catalog's rows: it needs no table. Whether a client let the API strip is another matter: Claude
Code can send an edit that keeps every turn's thinking, and its logs do not say whether it did
(bench/claude_code_wire.md §5)."""

from __future__ import annotations

import re
from functools import cache

_FAMILY = re.compile(r"claude-(?:(\d+)(?:-(\d+))?-)?(opus|sonnet|haiku)(?:-(\d+))?(?:-(\d+))?")


@cache
def strips_thinking(model: str) -> bool:
    """providers.md §1.6: thinking stripped on all Haiku and on Opus < 4.5 / Sonnet < 4.6 (and on
    every Claude 3.x model); kept on Opus 4.5+, Sonnet 4.6+ and newer families (Fable, Mythos,
    ...). An unknown name keeps thinking (the newer behaviour)."""
    m = _FAMILY.search(model)
    if m is None:
        return False
    old_major, _old_minor, family, major, minor = m.groups()
    if old_major is not None:  # claude-3-5-sonnet style names: Claude 3.x
        return True
    if family == "haiku":
        return True
    version = (int(major or 0), int(minor or 0))
    if version[1] > 99:  # a date suffix, not a minor version (claude-sonnet-4-20250514)
        version = (version[0], 0)
    return version < ((4, 5) if family == "opus" else (4, 6))
