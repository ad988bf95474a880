"""What the provider billed, as real logs record it (`ctxbench billed`; issues 11, 28, 33).

- `totals`: a log's billed sums per session and per model, at the catalog's prices, read through
  the importers (every format), and the copies of requests a forked or resumed session repeats.
- `fast`: the same sums of a Claude Code session read straight from its usage lines, as ccusage
  counts them, without importing the conversation.
- `ccusage`: where ccusage 20.x reads a format otherwise, the note that says how and why.
- `logs`: each log of a set summed in billing order (a copy is counted in the earliest log).
- `read_ahead`: a folder's Claude Code logs read on every core, the sums unchanged.
"""
