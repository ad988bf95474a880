"""Context policies: estimators, image eviction, compaction, cache marks, the registry, presets."""

from ctxbench.sim.core.native import extend as _extend_native

_extend_native(__path__, "policies")  # the compiled modules, when built (sim/core/native.py)
