"""Robustness: fuzzed inputs to every reader and the HTTP front (`fuzz_*`), and the soak that runs
them with concurrent conversations and killed workers (`python -m ctxbench.bench.robustness.soak`)."""
