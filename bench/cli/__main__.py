"""`python -m ctxbench.bench.cli`: the `ctxbench` command without its script."""

import sys

from ctxbench.bench.cli import main

sys.exit(main())
