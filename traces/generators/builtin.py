"""The bundled generators, registered by name (imported by the registry the first time a generator
is looked up or listed: importing `ctxbench.traces.generators`, e.g. for its `gen:` spec helpers,
no longer imports the generators themselves, which a run of a trace file never needs; issue 13)."""

from __future__ import annotations

from ctxbench.sim.core.registry import register
from ctxbench.traces.generators import Generator, coding, game

register("generator", "game")(Generator(game.GameParams, game.generate))
register("generator", "coding")(Generator(coding.CodingParams, coding.generate))
