"""Context policies: estimators, image eviction, compaction, cache marks, the registry, presets."""

from ctxbench.sim.native import extend as _extend_native

_extend_native(__path__, "policies")  # the compiled modules, when built (sim/native.py)
