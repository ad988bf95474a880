"""Optional extras: which `pip install 'ctxbench[EXTRA]'` provides a missing import.

Why: a verb that needs an optional dependency (the official SDKs for `drive`/`validate`, Dask for
`sweep --scheduler`, toktok-rs for `--tokenizer o200k`, jsonschema for schema checks) must say
which extra to install, not die with a ModuleNotFoundError traceback (pyproject.toml extras).
"""

from __future__ import annotations

# top-level import name -> the extra in pyproject.toml [project.optional-dependencies] that ships it
EXTRA_OF_MODULE: dict[str, str] = {
    "anthropic": "live",
    "openai": "live",
    "dask": "dask",
    "distributed": "dask",
    "toktok": "tokenizers",
    "jsonschema": "schema",
    "hypothesis": "test",
    "pytest": "test",
}


class MissingExtra(RuntimeError):
    """An optional dependency is not installed; the message names the extra to install."""


def extra_for(exc: ModuleNotFoundError) -> str | None:
    """The extra that provides the module `exc` could not import, or None if it is no extra's."""
    top = (exc.name or "").split(".")[0]
    return EXTRA_OF_MODULE.get(top)


def missing_message(exc: ModuleNotFoundError, what: str) -> str | None:
    """`ctxbench validate needs the 'live' extra (no module named 'anthropic'): pip install ...`."""
    extra = extra_for(exc)
    if extra is None:
        return None
    return f"{what} needs the {extra!r} extra (no module named {exc.name!r}): pip install 'ctxbench[{extra}]'"


def require(module: str) -> None:
    """Raise ModuleNotFoundError for `module` up front (before servers or threads start), so the
    CLI names the extra to install; nothing happens when it is importable."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)
