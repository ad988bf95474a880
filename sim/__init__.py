"""ctxbench engine: content model, request building, provider models, the simpy runner, records, CLI."""

__version__ = "0.1.0"
