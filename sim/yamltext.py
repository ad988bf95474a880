"""YAML text to Python data with the safe schema, through libyaml's C parser when PyYAML was built
with it (about 7x faster than the pure-Python parser on the bundled profiles and presets, which every
command reads at start-up), else through the pure-Python one; both raise `yaml.YAMLError`."""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The one document in `text` (None when empty), safe tags only."""
    return yaml.load(text, Loader=_LOADER)
