# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One operator value checked against its argparse action: types, choices, list shapes and size limits.

Why: SGLang's --config loader hands every value to argparse as text, so a value YAML typed differently (a
number for a string, ``yes`` for a path) or one no argv can carry (a NUL, a newline) fails only at start. Each
problem is a finding; the value to render comes back, or ``DROP`` when it must not be rendered.

Standard library only: modules ship this file to the target.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import close_matches, display, finding
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.rules import JSON_STRING_OPTIONS, VALUE_HINTS
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import FlagTable
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import is_secret_name
from ansible_collections.gpufleet.sglang.plugins.module_utils.yaml_text import CONTROL_CHARS_RE

JSON_TYPES = ("loads", "json_list_type", "parse_cuda_graph_config_arg")
STRING_TYPES = (None, "str", "nullable_str", "parse_cuda_graph_backend_arg")
_NUMBER_TYPES = ("int", "float", "human_readable_int")

MAX_INT = 2 ** 63 - 1
MAX_STRING = 4096  # a path or a name; longer is a mistake (PATH_MAX is 4096 on Linux)
MAX_JSON = 65536
MAX_LIST = 4096

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")
_HUMAN_INT_RE = re.compile(r"^\s*\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|[kKmMgGtT])?\s*$")

DROP = object()


class ValueChecker:
    """Checks one operator value against its argparse action; collects findings; returns the value to render."""

    def __init__(self, table: FlagTable, action: Mapping[str, Any], name: str, findings: list,
                 secret: bool = False, variable: str = "sglang_server_args") -> None:
        self.table = table
        self.action = action
        self.name = name
        self.ref = "%s.%s" % (variable, name) if variable else name  # how the operator finds it: the variable
        self.secret = secret or is_secret_name(name) or is_secret_name(action.get("dest"))
        self.findings = findings
        self.label = table.label(action)

    def _add(self, severity: str, code: str, message: str, hint: str = "") -> None:
        self.findings.append(finding(severity, code, self.name, message, hint))

    def show(self, value: Any) -> str:
        return display(value, self.secret)

    def check(self, value: Any) -> Any:
        kind = self.action.get("action")
        if kind == "_StoreTrueAction":
            return self._bool(value)
        nargs = self.action.get("nargs")
        if nargs in (None, "?"):
            if isinstance(value, (list, tuple)) and self.action.get("type") not in JSON_TYPES \
                    and not self._json_string():
                self._add("error", "list_for_scalar",
                          "%s: expected one value, got a list of %d" % (self.label, len(value)),
                          "Give %s a single value; only options that take several values accept a list." % self.ref)
                return DROP
            return self._scalar(value)
        return self._list(value, nargs)

    def _bool(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
            # SGLang's loader turns only YAML booleans into a bare --flag; a string stays an extra argument.
            result = value.strip().lower() in TRUE_WORDS
            self._add("error", "expected_bool",
                      "%s is an on/off flag (store_true) and got the string %s: SGLang's config loader passes it "
                      "as '%s %s', and argparse fails with 'unrecognized arguments: %s'"
                      % (self.name, self.show(value), self.table.canonical(self.action), value, value),
                      "Write a YAML boolean, unquoted: %s: %s." % (self.ref, "true" if result else "false"))
            return DROP
        self._add("error", "expected_bool",
                  "%s is an on/off flag (store_true): it takes true or false, not %s" % (self.name, self.show(value)),
                  "Write %s: true to turn it on; leave it out (or false) to keep it off." % self.ref)
        return DROP

    def _list(self, value: Any, nargs: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            value = [value]  # argparse accepts one value for nargs '+' / '*'
        if len(value) > MAX_LIST:
            self._add("error", "value_too_large", "%s: %d values is more than the %d this lint allows"
                      % (self.label, len(value), MAX_LIST), "Check where the list comes from.")
            return DROP
        if not value:
            self._add("info", "empty_list", "%s: an empty list is left out of the config file (SGLang's loader skips "
                      "it), so SGLang uses its default %s" % (self.name, display(self.table.default(self.name))))
            return DROP
        if isinstance(nargs, int) and len(value) != nargs:
            self._add("error", "wrong_list_length", "%s: expected %d argument%s, got %d"
                      % (self.label, nargs, "" if nargs == 1 else "s", len(value)),
                      "Give %s a list of exactly %d value%s." % (self.ref, nargs, "" if nargs == 1 else "s"))
            return DROP
        out = []
        for item in value:
            if isinstance(item, (list, tuple, dict)):
                self._add("error", "nested_list", "%s: list items must be plain values, not %s"
                          % (self.label, type(item).__name__), "Flatten the list.")
                return DROP
            if item is None:
                self._add("error", "null_in_list", "%s: the list holds a null (~) item" % self.label,
                          "Remove the empty item.")
                return DROP
            checked = self._scalar(item)
            if checked is DROP:
                return DROP
            out.append(checked)
        return out

    def _scalar(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
            return self._int_range(value)  # out of range whatever the option's type
        kind = self.action.get("type")
        if kind in _NUMBER_TYPES and isinstance(value, bool):
            value = self._wrong_type(value, kind)  # YAML's yes/no/on/off: never a number
        elif kind in ("int", "human_readable_int") and isinstance(value, int):
            value = self._int_range(value)
        elif kind == "int":
            value = self._int(value)
        elif kind == "float":
            value = self._float(value)
        elif kind == "human_readable_int":
            value = self._human_int(value)
        elif kind in JSON_TYPES:
            value = self._json(value, kind)
        elif self.name in JSON_STRING_OPTIONS or self.action.get("dest") in JSON_STRING_OPTIONS:
            value = self._json(value, "json_string")
        else:
            value = self._string(value)
        if value is DROP:
            return DROP
        return self._choices(value)

    def _json_string(self) -> bool:
        """A text option whose value SGLang parses as JSON during resolution (json_model_override_args, ...)."""
        return self.name in JSON_STRING_OPTIONS or self.action.get("dest") in JSON_STRING_OPTIONS

    def _choices(self, value: Any) -> Any:
        choices = self.action.get("choices")
        if choices and value not in choices:
            hint = VALUE_HINTS.get((self.name, value)) or ""
            close = close_matches(str(value), [str(c) for c in choices], limit=1)
            if not hint and close:
                hint = "Did you mean %s?" % close[0]
            if not hint:
                hint = "Give %s one of the listed choices." % self.ref
            self._add("error", "invalid_choice", "%s: invalid choice: %s (choose from %s)"
                      % (self.label, self.show(value), ", ".join(repr(c) for c in choices)), hint)
            return DROP
        return value

    def _example(self, type_name: str) -> str:
        """A value of a number type (int, float, human_readable_int) for the fix: the option's default when it has
        that type."""
        default = self.table.default(self.name)
        if type_name in ("int", "human_readable_int") and isinstance(default, int) and not isinstance(default, bool):
            return str(default)
        if type_name == "float" and isinstance(default, (int, float)) and not isinstance(default, bool):
            return repr(default)
        return {"int": "2", "human_readable_int": "64Gi", "float": "0.85"}[type_name]

    def _type_hint(self, value: Any, type_name: str) -> str:
        """The fix for a value of the wrong type: what to write instead, with an example.

        A YAML boolean for a text option is quoted, for a number option replaced by a number; for a JSON option the
        JSON hint below applies (a boolean is no mapping or list either)."""
        if isinstance(value, bool) and type_name == "str":  # _string() names every text type "str"
            return ("YAML read an unquoted yes/no/on/off/true/false as a boolean; quote it: %s: '%s'."
                    % (self.ref, str(value).lower()))
        if isinstance(value, bool) and type_name in _NUMBER_TYPES:
            return ("YAML read an unquoted yes/no/on/off/true/false as a boolean; give %s a %s, e.g. %s: %s."
                    % (self.ref, "whole number" if type_name == "int" else "number", self.ref,
                       self._example(type_name)))
        if type_name == "int":
            return "Give %s a whole number, e.g. %s: %s." % (self.ref, self.ref, self._example("int"))
        if type_name == "float":
            return "Give %s a number, e.g. %s: %s." % (self.ref, self.ref, self._example("float"))
        if type_name == "human_readable_int":
            return ("Give %s a whole number or a size with a suffix (k, M, G, T, Ki, Mi, Gi, Ti), e.g. %s: 64Gi."
                    % (self.ref, self.ref))
        if type_name == "json_list_type":
            return "Give %s a YAML list, or a JSON list as a string such as '[\"a\", \"b\"]'." % self.ref
        if type_name in ("parse_cuda_graph_config_arg",) or (type_name == "json_string"):
            return ("Give %s a YAML mapping (the collection writes it as JSON), or a JSON object as a string such as "
                    "'{\"key\": 1}'." % self.ref)
        if type_name == "loads":
            return "Give %s a YAML mapping or list, or valid JSON as a string." % self.ref
        return "Give %s one line of text; quote it in YAML if it could be read as another type." % self.ref

    def _wrong_type(self, value: Any, type_name: str) -> Any:
        shown = value if isinstance(value, str) else str(value)
        shown_type = "JSON" if type_name == "json_string" else type_name
        self._add("error", "invalid_type", "%s: invalid %s value: %s" % (self.label, shown_type, self.show(shown)),
                  self._type_hint(value, type_name))
        return DROP

    def _int(self, value: Any) -> Any:
        """A value for an int option that is not an int already: a float or a numeric string."""
        if isinstance(value, float):
            hint = ("Write %s: %d." % (self.ref, value)) if value.is_integer() else self._type_hint(value, "int")
            self._add("error", "invalid_type", "%s: invalid int value: %s" % (self.label, self.show(repr(value))),
                      hint)
            return DROP
        if isinstance(value, str):
            try:
                number = int(value)
            except ValueError:
                return self._wrong_type(value, "int")
            self._add("info", "coerced", "%s: the string %s is read as the number %d" % (self.name, self.show(value),
                                                                                         number))
            return self._int_range(number)
        return self._wrong_type(value, "int")

    def _int_range(self, value: int) -> Any:
        if not -MAX_INT - 1 <= value <= MAX_INT:
            self._add("error", "value_out_of_range", "%s: %s does not fit a 64-bit integer"
                      % (self.label, display(value, self.secret)), "Check where the number comes from.")
            return DROP
        return value

    def _float(self, value: Any) -> Any:
        number = value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return self._wrong_type(value, "float")
        elif not isinstance(value, (int, float)):
            return self._wrong_type(value, "float")
        if isinstance(number, int):
            if abs(number) > MAX_INT:
                self._add("error", "value_out_of_range", "%s: %s is out of range" % (self.label, self.show(value)),
                          "Give %s a plain number such as %s." % (self.ref, self._example("float")))
                return DROP
            number = float(number) if isinstance(value, str) else number
        if isinstance(number, float) and not math.isfinite(number):
            self._add("error", "value_not_finite", "%s: %s is not a finite number" % (self.label, self.show(value)),
                      "Give a plain number.")
            return DROP
        if isinstance(value, str):
            self._add("info", "coerced", "%s: the string %s is read as the number %r" % (self.name, self.show(value),
                                                                                         number))
        return number

    def _human_int(self, value: Any) -> Any:
        """A value for a size option (``64Gi``, ``2k``) that is not an int already."""
        if isinstance(value, str) and _HUMAN_INT_RE.match(value):
            return value.strip()
        return self._wrong_type(value, "human_readable_int")

    def _json(self, value: Any, kind: str) -> Any:
        """JSON-valued options: a mapping (or list) is written as compact JSON; a string must be valid JSON.

        ``kind`` is the argparse type, or ``json_string`` for a text option that SGLang json.loads() during
        resolution (a bad value there fails the start with a JSONDecodeError, not an argparse message).
        """
        if isinstance(value, str) and len(value) > MAX_JSON:
            self._add("error", "value_too_large", "%s: %d characters of JSON is more than the %d this lint allows"
                      % (self.label, len(value), MAX_JSON), "Check where the value of %s comes from." % self.ref)
            return DROP
        wants_object = kind in ("json_string", "parse_cuda_graph_config_arg")
        if isinstance(value, (dict, list)):
            if kind == "json_list_type" and not isinstance(value, list):
                return self._wrong_type(value, kind)
            if wants_object and not isinstance(value, dict):
                return self._wrong_type(value, kind)
            try:
                text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError, RecursionError) as exc:
                self._add("error", "invalid_type", "%s: cannot be written as JSON: %s" % (self.label, exc),
                          "Give %s plain YAML values only (strings, numbers, booleans, lists, mappings)." % self.ref)
                return DROP
        elif isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError as exc:
                if kind != "json_string":  # argparse's type function refuses it: say it in argparse's words
                    return self._wrong_type(value, kind)
                self._add("error", "invalid_json", "%s: the value is not JSON (%s): %s"
                          % (self.label, exc, self.show(value)), self._type_hint(value, kind))
                return DROP
            except RecursionError:
                return self._wrong_type(value, kind)
            if wants_object and not isinstance(parsed, dict):
                self._add("error", "invalid_json", "%s: the value is JSON but not an object: %s"
                          % (self.label, self.show(value)), self._type_hint(value, kind))
                return DROP
            if kind == "json_list_type" and not isinstance(parsed, list):
                return self._wrong_type(value, kind)
            # Re-dumped compactly: a pretty-printed JSON string would carry newlines into argv.
            try:
                text = json.dumps(parsed, separators=(",", ":"), allow_nan=False)
            except ValueError as exc:  # json.loads took NaN or Infinity, which JSON has not: refuse, never raise
                self._add("error", "invalid_json", "%s: the value is not JSON (%s): %s"
                          % (self.label, exc, self.show(value)), self._type_hint(value, kind))
                return DROP
        else:
            return self._wrong_type(value, kind)
        if len(text) > MAX_JSON:
            self._add("error", "value_too_large", "%s: %d characters of JSON is more than the %d this lint allows"
                      % (self.label, len(text), MAX_JSON), "Check where the value of %s comes from." % self.ref)
            return DROP
        return self._string(text, limit=MAX_JSON)

    def _string(self, value: Any, limit: int = MAX_STRING) -> Any:
        if isinstance(value, bool):
            return self._wrong_type(value, "str")
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                self._add("error", "value_not_finite",
                          "%s: %s is not a finite number" % (self.label, self.show(value)),
                          "Give %s text, quoted in YAML." % self.ref)
                return DROP
            text = str(value)
            self._add("warning", "number_for_string",
                      "%s takes text; YAML gave the number %s, which SGLang receives as %s"
                      % (self.name, self.show(value), self.show(text)),
                      "Quote the value in YAML if you meant other text (an unquoted 012 is the number 10, 1e3 may be "
                      "a float).")
            value = text
        if not isinstance(value, str):
            return self._wrong_type(value, "str")
        bad = CONTROL_CHARS_RE.search(value)
        if bad:
            self._add("error", "control_character",
                      "%s: the value contains %s (a newline, NUL or other control character)"
                      % (self.name, "a NUL byte" if bad.group() == "\x00" else repr(bad.group())),
                      "Remove the control character from %s; a value must be one line of printable text." % self.ref)
            return DROP
        if len(value) > limit:
            self._add("error", "value_too_large", "%s: %d characters is more than the %d this lint allows"
                      % (self.name, len(value), limit), "Check where the value of %s comes from." % self.ref)
            return DROP
        if value.startswith("-") and self.action.get("type") in STRING_TYPES:
            self._add("error", "value_looks_like_option",
                      "%s: the value %s starts with '-': SGLang's config loader passes it on the command line, where "
                      "argparse reads it as an option (expected one argument)" % (self.name, self.show(value)),
                      "Remove the leading '-' from %s." % self.ref)
            return DROP
        return value
