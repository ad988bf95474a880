"""ctxbench engine: the conversation processes, request building, provider models, the simpy runner and
the HTTP provider, on the shared vocabulary of `sim/core`."""

__version__ = "0.1.0"

from ctxbench.sim.core.native import activate as _activate_native

_activate_native(__path__)  # the compiled hot path, when `ctxbench compile` built it (sim/core/native.py)
