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
# Redaction by rule, not by list (issue 32): a name is a credential's when one of its words (split
# at separators and camelCase: `openaiApiKey` -> openai api key, `x-goog-api-key`, `authToken`)
# is a credential word. Token *counts* (`max_tokens`, `maxOutputTokens`, `token_count`) and cache
# keys (`prompt_cache_key`: Codex's session id, openai/codex codex-rs/core/src/client.rs) are not.
_CREDENTIAL_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "auth",
        "authorization",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "signature",
    }
)
_NOT_SECRET_AFTER = frozenset(
    {"count", "counts", "limit", "budget", "type", "usage", "id", "ids", "name", "tokens"}
)
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_credential_name(name: str) -> bool:
    """Whether a header, query or body field named `name` holds a credential, by the words in it."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _NOT_SECRET_AFTER:
        return False
    if words[-2:] == ["cache", "key"]:
        return False  # a cache key identifies a conversation, it grants nothing
    return any(w in _CREDENTIAL_WORDS for w in words)


# Values shaped like known credentials, wherever they appear (a key pasted into a message, an
# unparsed body, an error quoting one): Anthropic `sk-ant-`, OpenAI `sk-`/`sk-proj-`, Google `AIza`,
# GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, Slack `xox?-`, AWS access key ids
# `AKIA`, and the token after `Bearer`.
_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_\-])"  # a key starts a token: `task-list-management` holds no `sk-` key
    r"(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{12,}"
    r"|AIza[0-9A-Za-z_\-]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16})"
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/=\-]{8,}"
)
# In text that is not parsed JSON (a body that is not valid JSON, a query string, an error quoting
# either): the value after a credential-named field, `"apiToken": "..."`, `api-key=...`.
_NAMED_VALUE = re.compile(
    r"(?<![A-Za-z0-9_.\-])([A-Za-z0-9_.\-]{2,60})(\\?[\"']?\s*[:=]\s*\\?[\"']?)([^\s\"'&,;}\\]{4,})"
)


def looks_secret(value: str) -> bool:
    """A value that can be a credential, not a word: 8 or more characters with letters and digits
    and no space (`ArrowLeft`, `os.environ` are not), or a known key shape."""
    if _KEY_SHAPES.fullmatch(value):
        return True
    return (
        len(value) >= 8
        and value != REDACTED
        and " " not in value
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def scrub_shapes(text: str) -> str:
    """`text` with every credential-shaped value and every value after a credential-named field
    replaced by `[redacted]`."""
    text = _KEY_SHAPES.sub(REDACTED, text)
    if ":" in text or "=" in text:
        text = _NAMED_VALUE.sub(
            lambda m: (
                m.group(1) + m.group(2) + REDACTED
                if is_credential_name(m.group(1)) and looks_secret(m.group(3))
                else m.group(0)
            ),
            text,
        )
    return text


MIN_SCRUBBED = 8  # a secret value this long or longer is also removed wherever else it appears


def _is_secret_header(name: str) -> bool:
    if name.startswith("x-ctxbench-"):  # this project's control headers (index, output tokens, now)
        return False
    return name in SECRET_HEADERS or is_credential_name(name)


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header values that are or may be credentials become `[redacted]` (names are kept)."""
    return {k.lower(): REDACTED if _is_secret_header(k.lower()) else v for k, v in headers.items()}


def redact_path(path: str) -> str:
    """The path with the value of every credential-named query parameter `[redacted]`."""
    base, q, query = path.partition("?")
    if not q:
        return path
    parts = []
    for item in query.split("&"):
        name, eq, _value = item.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and is_credential_name(_unquote(name)) else item)
    return base + "?" + "&".join(parts)


def _unquote(text: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(text)


def _query_secrets(path: str) -> list[str]:
    query = path.partition("?")[2]
    out = []
    for item in query.split("&") if query else ():
        name, eq, value = item.partition("=")
        if eq and is_credential_name(_unquote(name)):
            out += [value, _unquote(value)]
    return out


def _scalar(v: Any) -> bool:
    """A value a credential can be (a schema object under a `password` property is not one)."""
    return isinstance(v, str | int | float) and not isinstance(v, bool)


def _secret_values(value: Any, out: set[str], depth: int = 0) -> None:
    if depth > 200:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and is_credential_name(k) and _scalar(v):
                if looks_secret(str(v)):  # removed wherever else it appears (`ArrowLeft` is not)
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
                for part in re.split(r"[;,\s]+", v):  # a cookie's values: `a=...; b=...`
                    found.add(part.partition("=")[2])
        found.update(_query_secrets(path))
        _secret_values(body, found)
        # longest first, so that a key is removed whole before a part of it could match
        self.secrets = sorted((s for s in found if len(s) >= MIN_SCRUBBED), key=len, reverse=True)

    def text(self, s: str) -> str:
        """`s` without the values sent as keys, credential-shaped values, or values after a
        credential-named field (`scrub_shapes`)."""
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        return scrub_shapes(s)

    def value(self, s: str) -> str:
        """A string of a parsed body or a message text: without the values sent as keys and the
        credential-shaped values (its field names are judged where it sits: `body`)."""
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        return _KEY_SHAPES.sub(REDACTED, s)

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {k: self.text(v) for k, v in redact_headers(headers).items()}

    def path(self, path: str) -> str:
        return self.text(redact_path(path))

    def body(self, value: Any, depth: int = 0) -> Any:
        """A copy of a parsed JSON body with credential fields `[redacted]` and secrets scrubbed."""
        if isinstance(value, str):
            return self.value(value)
        if depth > 400:  # deeper than any request body; recorded as a marker, never a RecursionError
            return "[nested too deeply to record]"
        if isinstance(value, dict):
            return {
                k: REDACTED
                if isinstance(k, str) and is_credential_name(k) and _scalar(v)
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
