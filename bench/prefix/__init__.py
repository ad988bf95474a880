"""The CI guard of prefix stability: `check-prefix` and its pytest plugin.

- `request_log` reads a request log (proxy/serve ledgers, raw captures, ctxbench traces) into
  comparable requests; `recognise` finds each request's parent and the harness's side requests
  and compactions; `check` classifies every break; `report` prints it (text, JSON, GitHub) and
  holds baselines; `pytest_plugin` is the `prefix_log` fixture.
"""
