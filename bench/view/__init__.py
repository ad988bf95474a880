"""The per-session view (`ctxbench view`, issue 31): one self-contained HTML page for a run, a
comparison of two runs of one trace, or an imported session under fidelity (billed beside
predicted). `collect` runs a trace and reads every request's prompt; `data` encodes the runs in
columns (strings as codes, prompts as deltas, every block once); `page` writes the page (inline
CSS, JS drawing on canvas, the data as one JSON script: nothing loaded from elsewhere)."""
