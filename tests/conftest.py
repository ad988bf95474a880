"""Test-wide settings: hypothesis never fails a property on timing (the machine is shared), and
under CI (CI=true) explores a fixed, reproducible set of examples."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ctxbench", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "ctxbench")
