"""Provider models: prompt caches, limits, prices, faults and latency behind one interface."""

from ctxbench.sim.core.native import extend as _extend_native

_extend_native(__path__, "sim/providers")  # the compiled modules, when built (sim/core/native.py)
