# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""YAML text for the files the collection writes on targets: one scalar at a time, byte-for-byte deterministic.

Why our own emitter: modules run with the target's Python and its standard library only (no PyYAML there),
and a written file decides whether the service restarts, so unchanged values must give identical bytes: one
fixed spelling per value, no timestamps. Controller-side code uses PyYAML instead (plugin_utils).

Strings are left plain only when YAML 1.1 (PyYAML, which SGLang uses) is certain to read them back as the same
string; otherwise they are single-quoted, or double-quoted with escapes when they hold non-ASCII characters, so
the text is pure ASCII whatever the reader's locale. Values no YAML scalar carries faithfully (control
characters, NaN, null, containers) raise ``ScalarError``.

This module also says which characters no value may hold (``CONTROL_CHARS_RE``) and what an option key looks
like (``OPTION_KEY_RE``): the flag lint reports the same things before rendering, from these same patterns.
"""

from __future__ import annotations

import math
import re
from typing import Any

# Characters a value may not contain: argv cannot carry NUL, a line break would split a file's scalar or a log
# line, and YAML refuses or folds the rest (C0/C1 controls, Unicode line separators, surrogates, non-characters,
# BOM).
CONTROL_CHARS_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
# An option key as SGLang's config loader and the flag tables spell it (tp-size, tp_size).
OPTION_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class ScalarError(ValueError):
    """A value that YAML text cannot carry faithfully."""


# Plain (unquoted) strings: a conservative subset that no YAML 1.1 resolver turns into a bool, null, number,
# timestamp, merge key or value token, and that holds no indicator character.
_PLAIN_RE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./+-]*$")
_RESERVED_WORDS = frozenset(("y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf"))


def yaml_string(text: str) -> str:
    """A string (a value or a key) as YAML text; plain only where no YAML 1.1 resolver could misread it."""
    bad = CONTROL_CHARS_RE.search(text)
    if bad:
        raise ScalarError("a string holds the control character %r; values must be one line of printable text"
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
    """repr() of a float, adjusted so PyYAML's resolver reads it back as a float, not a string."""
    if not math.isfinite(value):
        raise ScalarError("%r is not a finite number" % value)
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
            raise ScalarError("an integer of %d bits is too large to write" % value.bit_length()) from None
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return yaml_string(value)
    if value is None:
        raise ScalarError("null cannot be written: SGLang's loader would pass the text 'None'")
    raise ScalarError("a %s is not a plain scalar" % type(value).__name__)
