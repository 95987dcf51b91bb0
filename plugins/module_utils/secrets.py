# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one secrets policy of the collection: what a secret is, and how it is masked.

Why it exists: SGLang prints its whole ``ServerArgs`` at startup, ``api_key`` and ``admin_api_key``
included (``server_args=ServerArgs(... api_key='...' ...)``; docs/reference/sglang.md#secrets-sglang-prints),
and the same values reach tracebacks, launch commands and ``/server_info``. Anything a module hands back
to Ansible ends up in play output and logs, so every text it returns passes through :func:`redact`, every
flag dict through :func:`redact_args`, and the flag lint, the action plugin and the roles decide what is
secret with :func:`is_secret_name`. Nothing else in the collection defines secret names, patterns or the mask.

Three layers, because none alone is enough:

* names: an option or environment variable whose value is secret by what it is called (``api_key``,
  ``ssl_keyfile_password``, ``HF_TOKEN``, ``X_SECRET``...): its whole value is masked;
* known values (the API key from the inventory, an HF token from the environment file) are replaced
  wherever they occur, whatever surrounds them;
* secret-looking text is masked by pattern: fields (``api_key='...'``, ``--api-key X``, ``Authorization:
  Bearer ...``, ``HF_TOKEN=...``), token shapes (``hf_...``, ``sk-...``) and ``user:password@`` in URLs,
  which covers values the caller never knew.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, List, Mapping, Tuple

MASK = "********"

# Known values shorter than this are not replaced verbatim: masking every "abc" in a log would wreck it
# and hide nothing useful. Such values are still masked where they sit in a secret-looking field.
MIN_SECRET_LEN = 4

# Names (of SGLang options, dict keys, environment variables), compared in lower case with '-' read as '_':
# a name is secret when one of its '_'-separated words is in SECRET_NAME_WORDS, or it ends with one of
# SECRET_NAME_ENDINGS, or it is exactly 'token'. Not every '*_token' is secret: SGLang has
# bucket_time_to_first_token.
SECRET_NAME_WORDS = frozenset(("password", "passwd", "secret", "credential", "credentials"))
SECRET_NAME_ENDINGS = ("api_key", "apikey", "hf_token", "hub_token", "access_token", "auth_token", "bearer_token")

# Bare tokens recognisable by shape alone.
TOKEN_MIN_CHARS = 16
_TOKEN_PATTERNS = (
    re.compile(r"\bhf_[A-Za-z0-9]{%d,}" % TOKEN_MIN_CHARS),  # Hugging Face access token
    re.compile(r"\bsk-[A-Za-z0-9_-]{%d,}" % TOKEN_MIN_CHARS),  # OpenAI-style API key
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password@ in a URL
)

# Values that are never secrets even when they sit in a secret field (Python/JSON/YAML nulls, the mask).
_NOT_SECRETS = frozenset(("None", "null", "~", "", MASK))

# Environment-style names in text: HF_TOKEN, HUGGING_FACE_HUB_TOKEN, X_API_KEY, X_SECRET, X_PASSWORD.
_ENV_NAMES = r"""(?P<pre>\b(?:[A-Z][A-Z0-9_]*_TOKEN|[A-Z][A-Z0-9_]*API_KEY|[A-Z][A-Z0-9_]*_SECRET|[A-Z][A-Z0-9_]*PASSWORD)\s*[=:]\s*)"""

# Each pattern has groups ``pre`` (kept), ``q`` (an optional quote, kept) and ``val`` (masked).
_FIELD_PATTERNS = (
    # Python repr and keyword style, as in SGLang's ``server_args=ServerArgs(... api_key='x' ...)``.
    re.compile(r"""(?P<pre>\b(?:admin_)?api_key\s*=\s*)(?P<q>['"])(?P<val>.*?)(?P=q)"""),
    # JSON, as in ``/server_info`` dumps: ``"api_key": "x"``.
    re.compile(r"""(?P<pre>["'](?:admin_)?api_key["']\s*:\s*)(?P<q>["'])(?P<val>.*?)(?P=q)"""),
    # Unquoted ``api_key=x`` / ``api_key: x`` (env files, YAML, logged dicts); ``None``/``null`` are left alone.
    re.compile(r"""(?P<pre>\b(?:admin_)?api_key\s*[=:]\s*)(?P<q>)(?P<val>(?!None\b|null\b|~)[^\s'",)}\]]+)"""),
    # Command lines: ``--api-key x``, ``--admin-api-key=x``, ``--api-key 'x y'``.
    re.compile(r"""(?P<pre>--(?:admin-)?api-key(?:=|\s+))(?P<q>['"])(?P<val>.*?)(?P=q)"""),
    re.compile(r"""(?P<pre>--(?:admin-)?api-key(?:=|\s+))(?P<q>)(?P<val>[^\s'"]+)"""),
    # HTTP headers, in any quoting: ``Authorization: Bearer x``, ``'Authorization': 'Bearer x'``.
    re.compile(r"""(?P<pre>\bAuthorization["']?\s*[:=]\s*["']?Bearer\s+)(?P<q>)(?P<val>[^\s'",}]+)""", re.IGNORECASE),
    re.compile(r"""(?P<pre>\bBearer\s+)(?P<q>)(?P<val>[A-Za-z0-9._~+/=-]{8,})"""),
    # Environment style: HF_TOKEN=x, HUGGING_FACE_HUB_TOKEN=x, SOMETHING_API_KEY=x, ..._SECRET=x, ...PASSWORD=x.
    re.compile(_ENV_NAMES + r"""(?P<q>['"])(?P<val>.*?)(?P=q)"""),
    re.compile(_ENV_NAMES + r"""(?P<q>)(?P<val>[^\s'"]+)"""),
)

# Cheap pre-check so that callers scanning many lines only run the patterns where they can match.
_TRIGGERS = ("api_key", "api-key", "Bearer", "bearer", "BEARER", "TOKEN", "API_KEY", "SECRET", "PASSWORD",
             "hf_", "sk-", "@")


def is_secret_name(name: Any) -> bool:
    """True for names whose value is a secret: api_key, admin_api_key, ssl_keyfile_password, hf_token, HF_TOKEN..."""
    if not isinstance(name, str):
        return False
    norm = name.lstrip("-").replace("-", "_").lower()
    if norm == "token" or norm.endswith(SECRET_NAME_ENDINGS):
        return True
    return bool(SECRET_NAME_WORDS.intersection(norm.split("_")))


def may_contain_secret(text: str) -> bool:
    """Whether ``text`` could hold a secret-looking field or token (a fast substring test, no regex)."""
    return any(trigger in text for trigger in _TRIGGERS)


def _mask_field(match: "re.Match[str]") -> str:
    if match.group("val") in _NOT_SECRETS:
        return match.group(0)
    quote = match.group("q")
    return match.group("pre") + quote + MASK + quote


def find_secrets(text: str) -> List[str]:
    """Return the values that sit in secret-looking fields of ``text``, and the tokens it holds.

    Why: a value first seen in ``api_key='...'`` may show up again bare (in a request header, an error
    message); the scanner learns it here and then masks it everywhere with :func:`redact`.
    """
    found: List[str] = []
    for pattern in _FIELD_PATTERNS:
        for match in pattern.finditer(text):
            value = match.group("val")
            if value not in _NOT_SECRETS and value not in found:
                found.append(value)
    for pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            if match.group(0) not in found:
                found.append(match.group(0))
    return found


def redact(text: Any, secrets: Iterable[Any] = ()) -> Any:
    """Return ``text`` with known secret values and secret-looking text replaced by ``********``.

    ``secrets`` are exact values to hide wherever they appear (longest first, so a key that contains
    another is masked whole); values shorter than :data:`MIN_SECRET_LEN` are only masked by pattern.
    Idempotent: redacting twice gives the same text. A non-string is returned as it is.
    """
    if not isinstance(text, str) or not text:
        return text
    for value in sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LEN}, key=len, reverse=True):
        text = text.replace(value, MASK)
    if may_contain_secret(text):
        for pattern in _FIELD_PATTERNS:
            text = pattern.sub(_mask_field, text)
        for pattern in _TOKEN_PATTERNS:
            text = pattern.sub(MASK, text)
    return text


def _key(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def _secret_key(name: Any, secret_names: Iterable[str]) -> bool:
    return is_secret_name(name) or (isinstance(name, str) and _key(name) in set(secret_names))


def redact_value(name: Any, value: Any, secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> Any:
    """A copy of one value fit to return: masked whole under a secret name, else its strings redacted."""
    if _secret_key(name, secret_names) and value not in (None, "", [], {}):
        return MASK
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [redact_value("", item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(key, item, secrets) for key, item in value.items()}
    return value


def redact_args(args: Mapping[Any, Any], secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> dict:
    """A copy of a flag dict fit to return (``secret_names``: keys secret whatever they are called)."""
    secrets, secret_names = list(secrets), [_key(n) for n in secret_names if isinstance(n, str)]
    return {key: redact_value(key, value, secrets, secret_names) for key, value in args.items()}


def secret_values(args: Mapping[Any, Any], secret_names: Iterable[str] = ()) -> List[str]:
    """The secret strings of a flag dict, to mask wherever they show up in messages."""
    names = [_key(n) for n in secret_names if isinstance(n, str)]
    out: List[str] = []
    for key, value in args.items():
        if not _secret_key(key, names):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool) and str(item):
                out.append(str(item))
    return out


def split_secret_args(args: Any) -> Tuple[Any, dict]:
    """Split a flag dict into (plain, secret) by name, so only the secret part travels as no_log.

    Marking the whole dict no_log would mask every flag value ("2", "NEXTN") wherever it appears in the output.
    A non-mapping is returned unchanged with no secrets (the lint reports it).
    """
    if not isinstance(args, Mapping):
        return args, {}
    plain, secret = {}, {}
    for key, value in args.items():
        (secret if is_secret_name(key) else plain)[key] = value
    return plain, secret
