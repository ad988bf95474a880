"""Experiments (compare, sweeps, fidelity, live validation) and the simulator's own speed suites."""
