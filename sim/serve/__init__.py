"""The HTTP front of the provider models: what `ctxbench serve` and `proxy` run (issue #7).

- `wire`: Anthropic Messages / OpenAI Chat Completions / Responses request bodies → Transcript.
- `render`: responses, SSE streams and error bodies in each API's exact shapes.
- `server`: the stdlib HTTP server backed by `sim.providers` (usage from the same models as the simulator).
- `record`: redaction and the request ledger / ctxbench traces written from live traffic.
- `script`: scripted replies (replay a trace's replies, or a task script of tool calls).
- `proxy`: records a harness's traffic to a real upstream, streams passed through unchanged.
"""
