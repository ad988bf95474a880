"""Recording live traffic: credentials redacted first, one ledger line per request, ctxbench traces.

The ledger (`requests.jsonl`) holds every request exactly as received (body, redacted headers,
billed usage, status) — one line written and flushed under a lock as soon as the request is
answered, so concurrent conversations never lose or interleave records. Traces (one per
conversation, format v1) are built by sim/serve/linearize.py.
"""

from __future__ import annotations

import json
import math
import re
import threading
from pathlib import Path
from typing import IO, Any

from ctxbench.sim.core.provider import Usage

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "anthropic-admin-key",
        "x-amz-security-token",
        "openai-organization",
        "openai-project",
        "chatgpt-account-id",
    }
)
_SECRET_WORDS = re.compile(r"(token|secret|key|auth|cookie|password|credential|session-token)", re.I)
_SECRET_QUERY = re.compile(r"([?&](?:key|api_key|apikey|token|access_token)=)[^&]*", re.I)


# A body field whose name ends in a credential word, at any depth (`api_key`, `openai_api_key`,
# `access_token`, `client_secret`, `password`, `authorization`...). Token *counts* (`max_tokens`,
# `input_tokens`) and `prompt_cache_key` (Codex's session id, ecosystem.md L197) are not secrets.
_SECRET_FIELD = re.compile(
    r"(^|[_\-.])(token|secret|password|passwd|passphrase|authorization|auth|cookie|credentials?|"
    r"(api|access|private|secret|auth|admin|session|signing)[_\-]?key|apikey)$",
    re.I,
)
MIN_SCRUBBED = 8  # a secret value this long or longer is also removed wherever else it appears


def _is_secret_header(name: str) -> bool:
    if name.startswith("x-ctxbench-"):  # this project's control headers (index, output tokens, now)
        return False
    return name in SECRET_HEADERS or _SECRET_WORDS.search(name) is not None


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header values that are or may be credentials become `[redacted]` (names are kept)."""
    return {k.lower(): REDACTED if _is_secret_header(k.lower()) else v for k, v in headers.items()}


def redact_path(path: str) -> str:
    return _SECRET_QUERY.sub(lambda m: m.group(1) + REDACTED, path)


def _scalar(v: Any) -> bool:
    """A value a credential can be (a schema object under a `password` property is not one)."""
    return isinstance(v, str | int | float) and not isinstance(v, bool)


def _secret_values(value: Any, out: set[str], depth: int = 0) -> None:
    if depth > 200:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and _SECRET_FIELD.search(k) and _scalar(v):
                out.add(str(v))
            else:
                _secret_values(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _secret_values(v, out, depth + 1)


class Redactor:
    """Removes every credential from what is recorded of one request: secret headers (by name),
    query parameters (`?key=`), body fields whose name is a credential word, at any depth; and
    any value that was sent as a key (header, query or body field) wherever else it appears."""

    def __init__(self, headers: dict[str, str], path: str, body: Any = None) -> None:
        found: set[str] = set()
        for k, v in headers.items():
            if _is_secret_header(k.lower()):
                found.add(v)
                found.update(v.split())  # `Bearer sk-...`: the key alone too
        for m in _SECRET_QUERY.finditer(path):
            end = path.find("&", m.end())
            found.add(path[m.end() : end if end >= 0 else None])
        _secret_values(body, found)
        # longest first, so that a key is removed whole before a part of it could match
        self.secrets = sorted((s for s in found if len(s) >= MIN_SCRUBBED), key=len, reverse=True)

    def text(self, s: str) -> str:
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        return s

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {k: self.text(v) for k, v in redact_headers(headers).items()}

    def path(self, path: str) -> str:
        return self.text(redact_path(path))

    def body(self, value: Any, depth: int = 0) -> Any:
        """A copy of a parsed JSON body with credential fields `[redacted]` and secrets scrubbed."""
        if isinstance(value, str):
            return self.text(value) if self.secrets else value
        if depth > 400:  # deeper than any request body; recorded as a marker, never a RecursionError
            return "[nested too deeply to record]"
        if isinstance(value, dict):
            return {
                k: REDACTED
                if isinstance(k, str) and _SECRET_FIELD.search(k) and _scalar(v)
                else self.body(v, depth + 1)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.body(v, depth + 1) for v in value]
        return value


def usage_dict(u: Usage) -> dict[str, int]:
    return {
        "uncached": u.uncached,
        "cache_read": u.cache_read,
        "cache_write_5m": u.cache_write_5m,
        "cache_write_1h": u.cache_write_1h,
        "output": u.output,
    }


def strict_json(entry: dict[str, Any]) -> str:
    """One line of strict JSON for any entry: UTF-8 text where it can be, `\\uXXXX` escapes where a
    string holds a lone surrogate, non-finite numbers as strings (`"NaN"`), never an exception."""
    try:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        try:
            return json.dumps(entry, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        except ValueError:
            pass
    except (ValueError, TypeError, RecursionError):
        pass
    return json.dumps(_finite(entry), ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=repr)


def _finite(value: Any, depth: int = 0) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if depth > 400:
        return "[nested too deeply to record]"
    if isinstance(value, dict):
        return {str(k): _finite(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v, depth + 1) for v in value]
    return value


class Ledger:
    """Append-only JSONL of every request, one strict-JSON line each (`strict_json`); thread-safe,
    flushed per line; sequence numbers without gaps (a number is taken only with its line)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._f: IO[str] | None = None
        self.count = 0
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, entry: dict[str, Any]) -> int:
        with self._lock:
            text = strict_json({"seq": self.count + 1, **entry})
            if self._f is not None:
                self._f.write(text + "\n")
                self._f.flush()
            self.count += 1
            return self.count

    def close(self) -> None:
        with self._lock:
            if self._f is not None:
                self._f.close()
                self._f = None
