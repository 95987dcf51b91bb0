# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mask secrets in text before a module returns it.

Why this exists: SGLang prints its whole ``ServerArgs`` at startup, ``api_key`` and ``admin_api_key``
included (``server_args=ServerArgs(... api_key='...' ...)``; sglang-facts.md section 3.1 "Secrets leak"),
and the same values reach tracebacks, launch commands and ``/server_info``. Anything a module hands back
to Ansible ends up in play output and logs, so every text field is passed through :func:`redact` first.

Two layers, because neither alone is enough:

* known values (the API key from the inventory, an HF token from the environment file) are replaced
  wherever they occur, whatever surrounds them;
* secret-looking fields are masked by pattern (``api_key='...'``, ``--api-key X``, ``Authorization:
  Bearer ...``, ``HF_TOKEN=...``, ``hf_...`` tokens), which covers values the caller never knew.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import re
from typing import Iterable, List

MASK = "********"

# Known values shorter than this are not replaced verbatim: masking every "abc" in a log would wreck it
# and hide nothing useful. Such values are still masked where they sit in a secret-looking field.
MIN_SECRET_LEN = 4

# Values that are never secrets even when they sit in a secret field (Python/JSON/YAML nulls, masks).
_NOT_SECRETS = frozenset(("None", "null", "~", "", MASK))

# Names of environment variables that hold secrets: HF_TOKEN, HUGGING_FACE_HUB_TOKEN, X_API_KEY, X_SECRET, X_PASSWORD.
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

# Bare tokens recognisable by shape alone: Hugging Face user tokens and OpenAI-style keys.
_TOKEN_PATTERNS = (
    re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),
)

# Cheap pre-check so that callers scanning many lines only run the patterns where they can match.
_TRIGGERS = ("api_key", "api-key", "Bearer", "bearer", "BEARER", "TOKEN", "API_KEY", "SECRET", "PASSWORD", "hf_", "sk-")


def may_contain_secret(text: str) -> bool:
    """Whether ``text`` could hold a secret-looking field (a fast substring test, no regex)."""
    return any(trigger in text for trigger in _TRIGGERS)


def _mask_field(match: "re.Match[str]") -> str:
    if match.group("val") in _NOT_SECRETS:
        return match.group(0)
    quote = match.group("q")
    return match.group("pre") + quote + MASK + quote


def find_secrets(text: str) -> List[str]:
    """Return the values that sit in secret-looking fields of ``text``.

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


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return ``text`` with known secret values and secret-looking fields replaced by ``********``.

    ``secrets`` are exact values to hide wherever they appear (longest first, so a key that contains
    another is masked whole); values shorter than :data:`MIN_SECRET_LEN` are only masked by pattern.
    Idempotent: redacting twice gives the same text.
    """
    if not text:
        return text
    for value in sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LEN}, key=len, reverse=True):
        text = text.replace(value, MASK)
    if may_contain_secret(text):
        for pattern in _FIELD_PATTERNS:
            text = pattern.sub(_mask_field, text)
        for pattern in _TOKEN_PATTERNS:
            text = pattern.sub(MASK, text)
    return text
