"""The conversation processes of the engine: one simpy process per conversation, which builds each
request, calls the provider model and applies the policy's edits."""

from ctxbench.sim.core.native import extend as _extend_native

_extend_native(__path__, "sim/harness")  # the compiled modules, when built (sim/core/native.py)
