"""The uses and the application: the CLI (`cli/`), compare, sweeps, plots and reports, fidelity against
recorded bills (`fidelity/`), the CI guard of prefix stability (`prefix/`), live runs of real harnesses
(`live/`), robustness (`robustness/`); `speed/` holds the simulator's own speed suites."""
