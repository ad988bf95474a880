"""Where the shared real recorded sessions are: `$CTXBENCH_REAL`, else `../shared/traces-real`
beside the checkout. Tests that need them use `needs_real`, whose skip reason names the folder
looked at and how to point at another."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL = Path(os.environ.get("CTXBENCH_REAL") or ROOT.parent / "shared" / "traces-real")
SKIP_REASON = (
    f"shared real traces not found at {REAL} "
    f"({'from $CTXBENCH_REAL' if os.environ.get('CTXBENCH_REAL') else 'set CTXBENCH_REAL to their folder'})"
)
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=SKIP_REASON)
