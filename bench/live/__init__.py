"""Live runs of third-party harnesses (Claude Code, Codex CLI) against `ctxbench serve` (issue #7)."""
