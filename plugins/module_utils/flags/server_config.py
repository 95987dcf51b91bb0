# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render the YAML file that SGLang reads with ``--config``, byte-for-byte deterministic.

Why our own emitter: modules run with the target's Python and its standard library only (no PyYAML there),
and the file decides whether the service restarts, so unchanged arguments must give identical bytes: keys in
sorted order, one fixed spelling per value, no timestamps.

What it writes: a flat mapping of option names (``tp-size``, as ``sglang serve --<key>`` spells them; SGLang's
loader turns each key into ``--<key>``) to plain scalars (booleans, integers, floats, strings) or block lists of
scalars. Strings are left plain only when YAML 1.1 (PyYAML, which SGLang uses) is certain to read them back as
the same string; otherwise they are single-quoted, or double-quoted with escapes when they hold non-ASCII
characters, so the file is pure ASCII whatever the service's locale. Values that no YAML scalar can carry
faithfully through SGLang (control characters, NaN, null, nested structures) raise ``ConfigRenderError``;
``sglang_flags.lint_server_args`` reports those as findings first, so a linted dict always renders.

Secrets (``api_key``...) are written here, and only here: the file is installed with mode 0640.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, Mapping

HEADER = "# SGLang launch flags (sglang serve --config), rendered by gpufleet.sglang from sglang_server_args.\n" \
         "# Do not edit: the next deploy overwrites it.\n"

# Plain (unquoted) strings: a conservative subset that no YAML 1.1 resolver turns into a bool, null, number,
# timestamp, merge key or value token, and that holds no indicator character.
_PLAIN_RE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./+-]*$")
_RESERVED_WORDS = frozenset(("y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf"))
_BAD_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class ConfigRenderError(ValueError):
    """A value that the --config file cannot carry faithfully."""


def _string(text: str) -> str:
    bad = _BAD_CHARS.search(text)
    if bad:
        raise ConfigRenderError("a string holds the control character %r; values must be one line of printable text"
                                % bad.group())
    if _PLAIN_RE.match(text) and text.lower() not in _RESERVED_WORDS:
        return text
    if text.isascii():
        return "'" + text.replace("'", "''") + "'"
    out = []
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif code < 0x80:
            out.append(char)
        elif code <= 0xFFFF:
            out.append("\\u%04x" % code)
        else:
            out.append("\\U%08x" % code)
    return '"' + "".join(out) + '"'


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ConfigRenderError("%r is not a finite number" % value)
    text = repr(value)
    # PyYAML's float resolver needs a '.' in the mantissa and a signed exponent: 1e-05 -> 1.0e-05.
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        text = mantissa + "e" + exponent
    elif "." not in text:
        text += ".0"
    return text


def yaml_scalar(value: Any) -> str:
    """One scalar as YAML text that PyYAML's safe_load reads back as the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # more digits than Python will print (sys.get_int_max_str_digits)
            raise ConfigRenderError("an integer of %d bits is too large to write" % value.bit_length()) from None
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if value is None:
        raise ConfigRenderError("null cannot be written: SGLang's loader would pass the text 'None'")
    raise ConfigRenderError("a %s is not a plain scalar" % type(value).__name__)


def render_server_config(config: Mapping[str, Any], header: bool = True) -> str:
    """The --config file for a flat mapping of option names to scalars or lists of scalars, keys sorted."""
    if not isinstance(config, Mapping):
        raise ConfigRenderError("the config is a mapping of option names to values, not %s" % type(config).__name__)
    lines = [HEADER] if header else []
    if not config:
        lines.append("{}\n")
        return "".join(lines)
    for key in sorted(config, key=str):
        if not isinstance(key, str) or not _KEY_RE.match(key):
            raise ConfigRenderError("%r is not an option name" % (key,))
        value = config[key]
        name = _string(key)
        if isinstance(value, (list, tuple)):
            if not value:
                lines.append("%s: []\n" % name)
                continue
            lines.append("%s:\n" % name)
            for item in value:
                if isinstance(item, (list, tuple, dict)):
                    raise ConfigRenderError("%s: list items must be plain values, not a %s"
                                            % (key, type(item).__name__))
                try:
                    lines.append("  - %s\n" % yaml_scalar(item))
                except ConfigRenderError as exc:
                    raise ConfigRenderError("%s: %s" % (key, exc)) from None
            continue
        if isinstance(value, dict):
            raise ConfigRenderError("%s: a mapping is not a plain value (JSON options take a JSON string)" % key)
        try:
            lines.append("%s: %s\n" % (name, yaml_scalar(value)))
        except ConfigRenderError as exc:
            raise ConfigRenderError("%s: %s" % (key, exc)) from None
    return "".join(lines)


def config_sha256(text: str) -> str:
    """Digest of a rendered file, to tell whether the installed one changed without returning its secrets."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
