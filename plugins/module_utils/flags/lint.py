# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The launch-flag layer: lint ``sglang_server_args`` against the flag table of an SGLang release.

Why it exists: SGLang refuses some flag combinations only when it starts, minutes after the working server was
stopped. This layer answers, before anything restarts, "would the installed SGLang accept these flags, and
would they do what the operator thinks?"

Shape (after community.docker's ``module_utils/compose_v2.py``): pure functions over data. The flag table of a
release is the dict that ``data/sglang_flags/<release>.json`` holds; the caller loads it (the action plugin, on
the controller) and passes it in, so this file runs unchanged in a module on the target: standard library only,
Python >= 3.9, no I/O.

Main entry points:

* ``lint_server_args(server_args, table, release, history=None, facts=None) -> LintResult``: normalise the
  keys (``tp_size``, ``tp-size``, ``--tp-size``), check types, choices and list shapes, report unknown, removed,
  renamed and deprecated flags, apply the release's cross-flag rules (``sglang_flags_rules``). Every problem is a
  finding; nothing raises on bad input.
* ``select_table_release(requested, available)``: which bundled table serves a release.
* ``build_history(tables)``: the option names of every bundled release, so a flag missing from one release can
  be reported as removed (with its replacement) or not yet added, rather than as a typo.
* ``redact_text`` / ``redact_args`` / ``is_secret_name``: keep API keys and tokens out of everything returned.

A finding is a dict: ``severity`` (error: SGLang would refuse or crash; warning: accepted but surprising; info),
``code`` (stable identifier), ``flag`` (underscore option name, '' when none), ``message`` (SGLang's own text
where it has one), ``hint`` (what to change) and ``source`` (``lint`` here; ``parser`` for the real parser).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any, Iterable, Mapping, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.rules import (
    REPLACEMENTS,
    RULES,
    VALUE_HINTS,
)

SEVERITIES = ("error", "warning", "info")
MASK = "********"

# argparse action classes that SGLang's --config loader turns into CLI arguments. Every other class
# (BooleanOptionalAction, LoRAPathAction, the Deprecated* actions) is refused with
# "Unsupported config option '<dest>' with action '<class>'" (sglang/srt/utils/server_args_config_parser.py).
STORE_CLASSES = ("_StoreAction", "_StoreTrueAction")
JSON_TYPES = ("loads", "json_list_type", "parse_cuda_graph_config_arg")
STRING_TYPES = (None, "str", "nullable_str", "parse_cuda_graph_backend_arg")

MAX_INT = 2 ** 63 - 1
MAX_STRING = 4096  # a path or a name; longer is a mistake (PATH_MAX is 4096 on Linux)
MAX_JSON = 65536
MAX_LIST = 4096

# Characters a value may not contain: argv cannot carry NUL, a line break would split the config file's
# scalar or a log line, and YAML refuses or folds the rest (C0/C1 controls, Unicode line separators,
# surrogates, non-characters, BOM).
_BAD_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_RELEASE_RE = re.compile(r"^\s*v?(\d+)\.(\d+)\.(\d+)(\S*)\s*$")
_HUMAN_INT_RE = re.compile(r"^\s*\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|[kKmMgGtT])?\s*$")
_TRUE_WORDS = ("true", "yes", "on", "1")
_FALSE_WORDS = ("false", "no", "off", "0")

# Secrets: option names whose values are secret, and secret-looking substrings of any value.
_SECRET_NAME_PARTS = frozenset(("password", "passwd", "secret", "credential", "credentials"))
_SECRET_NAME_ENDINGS = ("api_key", "apikey", "hf_token", "access_token", "auth_token", "bearer_token")
_SECRET_VALUE_RES = (
    re.compile(r"hf_[A-Za-z0-9]{16,}"),  # Hugging Face access token
    re.compile(r"sk-[A-Za-z0-9_-]{16,}"),  # OpenAI-style API key
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password@ in a URL
)


class ReleaseError(ValueError):
    """The requested SGLang release cannot be linted (not a version, or outside the bundled tables)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class FlagTableError(ValueError):
    """The flag table is not in the format of data/sglang_flags/<release>.json."""


# ---------------------------------------------------------------------------------------------------------------------
# Findings

def finding(severity: str, code: str, flag: Optional[str], message: str, hint: str = "",
            source: str = "lint") -> dict:
    """Build one finding (the schema every part of the collection returns)."""
    if severity not in SEVERITIES:
        raise ValueError("severity must be one of %s, not %r" % (", ".join(SEVERITIES), severity))
    return {"severity": severity, "code": code, "flag": flag or "", "message": message, "hint": hint,
            "source": source}


def sort_findings(findings: Iterable[Mapping[str, Any]]) -> list:
    """Errors first, then warnings, then infos; stable within a severity so output is deterministic."""
    rank = {name: index for index, name in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (rank.get(f.get("severity"), 9), f.get("source", ""),
                                           f.get("flag", ""), f.get("code", ""), f.get("message", "")))


def count_findings(findings: Iterable[Mapping[str, Any]]) -> dict:
    """``{'error': n, 'warning': n, 'info': n}``."""
    counts = {name: 0 for name in SEVERITIES}
    for item in findings:
        if item.get("severity") in counts:
            counts[item["severity"]] += 1
    return counts


# ---------------------------------------------------------------------------------------------------------------------
# Releases

def parse_release(text: Any) -> Tuple[int, int, int]:
    """'0.5.23', 'v0.5.23' or '0.5.23.post1' -> (0, 5, 23). Raises ReleaseError for anything else."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise ReleaseError("sglang_version must be a string such as '0.5.23', not %s" % _display(text),
                           "Quote it in YAML: sglang_install_version: '0.5.23'.")
    match = _RELEASE_RE.match(text)
    if not match:
        raise ReleaseError("sglang_version %s is not an SGLang release number such as '0.5.23'" % _display(text),
                           "Give the version pip installs (pip show sglang).")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def format_release(release: Tuple[int, int, int]) -> str:
    return "%d.%d.%d" % tuple(release)


def in_release_range(release: Tuple[int, int, int], since: Optional[str], until: Optional[str]) -> bool:
    """True when since <= release <= until (either bound may be None)."""
    if since is not None and release < parse_release(since):
        return False
    if until is not None and release > parse_release(until):
        return False
    return True


def select_table_release(requested: Any, available: Iterable[str]) -> str:
    """Pick the flag table for a release: its own, else the nearest older dumped one.

    Releases between dumped tables (0.5.11, 0.5.13, 0.5.15-17, 0.5.21) changed few flags, and a flag that a
    release added is better reported as unknown than a removed one passed as valid; lint_server_args() says
    which table it used. Outside the bundled range there is no honest answer, so that raises ReleaseError.
    """
    wanted = parse_release(requested)
    tables = {}
    for name in available:
        try:
            tables[parse_release(name)] = name
        except ReleaseError:
            continue
    if not tables:
        raise ReleaseError("no SGLang flag tables are available", "Check the collection's data/sglang_flags folder.")
    if wanted in tables:
        return tables[wanted]
    oldest, newest = min(tables), max(tables)
    if wanted < oldest:
        raise ReleaseError("SGLang %s is older than the oldest bundled flag table (%s)"
                           % (format_release(wanted), tables[oldest]),
                           "Install SGLang %s or newer (the --config file needs 0.5.9+)." % tables[oldest])
    if wanted > newest:
        raise ReleaseError("no flag table for SGLang %s; the newest bundled one is %s"
                           % (format_release(wanted), tables[newest]),
                           "Dump one with tools/flags/dump_flags.py from a venv with that release installed, and add "
                           "it to data/sglang_flags/.")
    return tables[max(r for r in tables if r < wanted)]


# ---------------------------------------------------------------------------------------------------------------------
# Secrets

def is_secret_name(name: Any) -> bool:
    """True for option names whose value is a secret (api_key, admin_api_key, ssl_keyfile_password, hf_token...)."""
    if not isinstance(name, str):
        return False
    norm = name.lstrip("-").replace("-", "_").lower()
    if norm == "token" or norm.endswith(_SECRET_NAME_ENDINGS):
        return True
    return bool(_SECRET_NAME_PARTS.intersection(norm.split("_")))


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask the given secret strings and anything that looks like a token or a URL password."""
    if not isinstance(text, str):
        return text
    for secret in sorted((s for s in secrets if isinstance(s, str) and s), key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern in _SECRET_VALUE_RES:
        text = pattern.sub(MASK, text)
    return text


def _secret(name: Any, secret_names: Iterable[str] = ()) -> bool:
    return is_secret_name(name) or (isinstance(name, str) and option_name(name) in set(secret_names))


def redact_value(name: Any, value: Any, secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> Any:
    """A copy of one flag value fit to return: the whole value masked for secret names, else scrubbed strings."""
    if _secret(name, secret_names) and value not in (None, "", [], {}):
        return MASK
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, list):
        return [redact_value("", item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(key, item, secrets) for key, item in value.items()}
    return value


def redact_args(args: Mapping[Any, Any], secrets: Iterable[str] = (), secret_names: Iterable[str] = ()) -> dict:
    """A copy of a flag dict fit to return: secret values masked (secret_names: keys secret whatever their name)."""
    secrets, secret_names = list(secrets), [option_name(n) for n in secret_names if isinstance(n, str)]
    return {key: redact_value(key, value, secrets, secret_names) for key, value in args.items()}


def secret_values(args: Mapping[Any, Any], secret_names: Iterable[str] = ()) -> list:
    """The secret strings of a flag dict, to scrub from messages."""
    names = [option_name(n) for n in secret_names if isinstance(n, str)]
    out = []
    for key, value in args.items():
        if not _secret(key, names):
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool) and str(item):
                out.append(str(item))
    return out


def _display(value: Any, secret: bool = False, limit: int = 60) -> str:
    """A short, printable rendering of a value for messages (argparse quotes with repr too)."""
    if secret:
        return repr(MASK)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return "<an integer of about %d digits>" % int(value.bit_length() * 0.30103)
    text = repr(value)
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return redact_text(text)


# ---------------------------------------------------------------------------------------------------------------------
# Flag tables

def option_name(option: str) -> str:
    """'--tp-size' -> 'tp_size' (the spelling sglang_server_args uses)."""
    return option.lstrip("-").replace("-", "_")


class FlagTable:
    """Index over one release's flag table (the format of data/sglang_flags/<release>.json)."""

    def __init__(self, table: Mapping[str, Any]) -> None:
        if not isinstance(table, Mapping) or not isinstance(table.get("actions"), list):
            raise FlagTableError("a flag table is a mapping with an 'actions' list (data/sglang_flags/<release>.json)")
        self.release = str(table.get("sglang_version") or "")
        self.actions = []
        self.by_option = {}
        self.by_dest = {}
        for action in table["actions"]:
            if not isinstance(action, Mapping) or not isinstance(action.get("opts"), list) \
                    or not isinstance(action.get("dest"), str):
                raise FlagTableError("every action of a flag table needs 'opts' (a list) and 'dest': %r"
                                     % (action,))
            if not action["opts"]:
                continue  # a positional: sglang serve has none besides the wrapper's model path
            self.actions.append(action)
            self.by_dest.setdefault(action["dest"], []).append(action)
            for option in action["opts"]:
                self.by_option[option] = action
        self.long_options = sorted(o for o in self.by_option if o.startswith("--"))
        self.serve_only = {}
        for action in table.get("serve_only") or ():
            for option in action.get("opts") or ():
                self.serve_only[option] = action

    def canonical(self, action: Mapping[str, Any]) -> str:
        """The option an action is rendered as: the one named like its dest, else its first long option.

        SGLang's --config loader turns each key into ``--<key>``, so the key must be an option string.
        """
        longs = [o for o in action["opts"] if o.startswith("--")] or list(action["opts"])
        for option in longs:
            if option_name(option) == action["dest"]:
                return option
        return longs[0]

    def has(self, name: str) -> bool:
        return ("--" + name.replace("_", "-")) in self.by_option

    def action(self, name: str) -> Optional[Mapping[str, Any]]:
        return self.by_option.get("--" + name.replace("_", "-"))

    def default(self, name: str) -> Any:
        action = self.action(name)
        if action is None:
            return None
        default = action.get("default")
        return None if default == "==SUPPRESS==" else default

    def prefix_matches(self, option: str) -> list:
        """Long options that argparse's allow_abbrev would accept for this prefix."""
        return [o for o in self.long_options if o.startswith(option) and o != option]

    def label(self, action: Mapping[str, Any]) -> str:
        """How argparse names an action in its errors: 'argument --tp-size/--tensor-parallel-size'."""
        return "argument " + "/".join(action["opts"])


def build_history(tables: Mapping[str, Mapping[str, Any]], options: Optional[Iterable[str]] = None) -> dict:
    """Where each option exists: ``{'--x': [[release, dest, action_class, deprecated], ...]}``, oldest first.

    ``options`` limits the result to those option strings (the action plugin passes only the operator's keys,
    so the module arguments stay small).
    """
    wanted = set(options) if options is not None else None
    history = {}
    for release in sorted(tables, key=_release_sort_key):
        table = tables[release]
        for action in table.get("actions") or ():
            for option in action.get("opts") or ():
                if wanted is not None and option not in wanted:
                    continue
                history.setdefault(option, []).append(
                    [str(table.get("sglang_version") or release), action.get("dest"), action.get("action"),
                     bool(action.get("deprecated"))])
    return history


def _release_sort_key(text: str) -> Tuple[int, int, int]:
    try:
        return parse_release(text)
    except ReleaseError:
        return (0, 0, 0)


def normalise_key(key: Any) -> Tuple[Optional[str], Optional[str]]:
    """'tp_size' / 'tp-size' / '--tp-size' -> ('--tp-size', None); bad keys -> (None, why)."""
    if not isinstance(key, str):
        return None, "option names are strings, not %s" % type(key).__name__
    text = key[2:] if key.startswith("--") else key
    if _BAD_CHARS.search(text) or not text:
        return None, "the option name %s is empty or contains control characters" % _display(key)
    if "=" in text:
        return None, "the option name %s contains '=': give the value as the dict value" % _display(key)
    if not _KEY_RE.match(text):
        return None, "%s is not an SGLang option name (letters, digits, '_' and '-' only)" % _display(key)
    return "--" + text.replace("_", "-"), None


# ---------------------------------------------------------------------------------------------------------------------
# Rules

class RuleContext:
    """What a cross-flag rule sees: the values SGLang will get, the release, the table and host facts."""

    def __init__(self, release: Tuple[int, int, int], table: FlagTable, values: Mapping[int, Any],
                 facts: Optional[Mapping[str, Any]] = None) -> None:
        self.release = release
        self.table = table
        self._values = values  # id(action) -> the operator's (normalised) value
        self.facts = dict(facts or {})

    def has(self, name: str) -> bool:
        return self.table.has(name)

    def given(self, name: str) -> bool:
        """Whether the operator set it (under any of its option names: tp_size and tensor_parallel_size alike)."""
        action = self.table.action(name)
        return action is not None and id(action) in self._values

    def get(self, name: str) -> Any:
        """The value SGLang will parse: the operator's, else the table's default (None if the option is absent)."""
        action = self.table.action(name)
        if action is not None and id(action) in self._values:
            return self._values[id(action)]
        return self.table.default(name)

    def on(self, name: str) -> bool:
        return bool(self.get(name))

    def fact_bool(self, name: str) -> Optional[bool]:
        """A host fact as True/False, None when unknown (facts often arrive as the strings 'true'/'false')."""
        value = self.facts.get(name)
        if isinstance(value, bool) or value is None:
            return value
        text = str(value).strip().lower()
        if text in _TRUE_WORDS:
            return True
        if text in _FALSE_WORDS:
            return False
        return None

    def choices(self, name: str) -> Optional[list]:
        action = self.table.action(name)
        return action.get("choices") if action else None

    @staticmethod
    def error(code: str, flag: str, message: str, hint: str = "") -> dict:
        return finding("error", code, flag, message, hint)

    @staticmethod
    def warning(code: str, flag: str, message: str, hint: str = "") -> dict:
        return finding("warning", code, flag, message, hint)

    @staticmethod
    def info(code: str, flag: str, message: str, hint: str = "") -> dict:
        return finding("info", code, flag, message, hint)


def replacement_for(name: str, release: Tuple[int, int, int], table: Optional[FlagTable] = None,
                    dest: Optional[str] = None) -> Optional[str]:
    """Advice for a removed or deprecated flag: curated (REPLACEMENTS), else an alias found through its dest."""
    for item in REPLACEMENTS.get(name, ()):
        if in_release_range(release, item.since, item.until):
            if item.flag is None:
                return "Drop it: %s." % item.note
            target = item.flag
            if item.value is not None:
                target = "%s: %s" % (item.flag, item.value if isinstance(item.value, str) else json.dumps(item.value))
            return "Use %s instead (%s)." % (target, item.note)
    if table is not None and dest and dest != name:
        for action in table.by_dest.get(dest, ()):
            if not action.get("deprecated") and action.get("action") in STORE_CLASSES:
                return "Use %s instead (same setting, new name)." % option_name(table.canonical(action))
    return None


def _replacement_message(name: str, release: Tuple[int, int, int]) -> str:
    for item in REPLACEMENTS.get(name, ()):
        if in_release_range(release, item.since, item.until) and item.message:
            return item.message
    return ""


# ---------------------------------------------------------------------------------------------------------------------
# Values

_DROP = object()


class _Checker:
    """Checks one operator value against its argparse action; collects findings; returns the value to render."""

    def __init__(self, table: FlagTable, action: Mapping[str, Any], name: str, findings: list,
                 secret: bool = False) -> None:
        self.table = table
        self.action = action
        self.name = name
        self.secret = secret or is_secret_name(name) or is_secret_name(action.get("dest"))
        self.findings = findings
        self.label = table.label(action)

    def _add(self, severity: str, code: str, message: str, hint: str = "") -> None:
        self.findings.append(finding(severity, code, self.name, message, hint))

    def show(self, value: Any) -> str:
        return _display(value, self.secret)

    def check(self, value: Any) -> Any:
        kind = self.action.get("action")
        if kind == "_StoreTrueAction":
            return self._bool(value)
        nargs = self.action.get("nargs")
        if nargs in (None, "?"):
            if isinstance(value, (list, tuple)) and self.action.get("type") not in JSON_TYPES:
                self._add("error", "list_for_scalar",
                          "%s: expected one value, got a list of %d" % (self.label, len(value)),
                          "Give %s a single value; only options that take several values accept a list." % self.name)
                return _DROP
            return self._scalar(value)
        return self._list(value, nargs)

    def _bool(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS + _FALSE_WORDS:
            result = value.strip().lower() in _TRUE_WORDS
            self._add("info", "coerced", "%s: the string %s is read as %s" % (self.name, self.show(value),
                                                                              "true" if result else "false"),
                      "Write a YAML boolean: %s: %s." % (self.name, "true" if result else "false"))
            return result
        self._add("error", "expected_bool",
                  "%s is an on/off flag (store_true): it takes true or false, not %s" % (self.name, self.show(value)),
                  "Write %s: true to turn it on; leave it out (or false) to keep it off." % self.name)
        return _DROP

    def _list(self, value: Any, nargs: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            value = [value]  # argparse accepts one value for nargs '+' / '*'
        if len(value) > MAX_LIST:
            self._add("error", "value_too_large", "%s: %d values is more than the %d this lint allows"
                      % (self.label, len(value), MAX_LIST), "Check where the list comes from.")
            return _DROP
        if not value:
            self._add("info", "empty_list", "%s: an empty list is left out of the config file (SGLang's loader skips "
                      "it), so SGLang uses its default %s" % (self.name, _display(self.table.default(self.name))))
            return _DROP
        if isinstance(nargs, int) and len(value) != nargs:
            self._add("error", "wrong_list_length", "%s: expected %d argument%s, got %d"
                      % (self.label, nargs, "" if nargs == 1 else "s", len(value)))
            return _DROP
        out = []
        for item in value:
            if isinstance(item, (list, tuple, dict)):
                self._add("error", "nested_list", "%s: list items must be plain values, not %s"
                          % (self.label, type(item).__name__), "Flatten the list.")
                return _DROP
            if item is None:
                self._add("error", "null_in_list", "%s: the list holds a null (~) item" % self.label,
                          "Remove the empty item.")
                return _DROP
            checked = self._scalar(item)
            if checked is _DROP:
                return _DROP
            out.append(checked)
        return out

    def _scalar(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
            return self._int_range(value)  # out of range whatever the option's type
        kind = self.action.get("type")
        if kind in ("int",):
            value = self._int(value)
        elif kind == "float":
            value = self._float(value)
        elif kind == "human_readable_int":
            value = self._human_int(value)
        elif kind in JSON_TYPES:
            value = self._json(value, kind)
        else:
            value = self._string(value)
        if value is _DROP:
            return _DROP
        return self._choices(value)

    def _choices(self, value: Any) -> Any:
        choices = self.action.get("choices")
        if choices and value not in choices:
            hint = VALUE_HINTS.get((self.name, value)) or ""
            close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.6)
            if not hint and close:
                hint = "Did you mean %s?" % close[0]
            self._add("error", "invalid_choice", "%s: invalid choice: %s (choose from %s)"
                      % (self.label, self.show(value), ", ".join(repr(c) for c in choices)), hint)
            return _DROP
        return value

    def _wrong_type(self, value: Any, type_name: str) -> Any:
        shown = value if isinstance(value, str) else str(value)
        hint = ""
        if isinstance(value, bool):
            hint = ("YAML read an unquoted yes/no/on/off/true/false as a boolean; quote the value, or give a "
                    "%s." % type_name)
        self._add("error", "invalid_type", "%s: invalid %s value: %s" % (self.label, type_name, self.show(shown)),
                  hint)
        return _DROP

    def _int(self, value: Any) -> Any:
        if isinstance(value, bool):
            return self._wrong_type(value, "int")
        if isinstance(value, int):
            return self._int_range(value)
        if isinstance(value, float):
            hint = "Write %d." % value if value.is_integer() else ""
            self._add("error", "invalid_type", "%s: invalid int value: %s" % (self.label, self.show(repr(value))),
                      hint)
            return _DROP
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
                      % (self.label, _display(value, self.secret)), "Check where the number comes from.")
            return _DROP
        return value

    def _float(self, value: Any) -> Any:
        if isinstance(value, bool):
            return self._wrong_type(value, "float")
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
                self._add("error", "value_out_of_range", "%s: %s is out of range" % (self.label, self.show(value)))
                return _DROP
            number = float(number) if isinstance(value, str) else number
        if isinstance(number, float) and not math.isfinite(number):
            self._add("error", "value_not_finite", "%s: %s is not a finite number" % (self.label, self.show(value)),
                      "Give a plain number.")
            return _DROP
        if isinstance(value, str):
            self._add("info", "coerced", "%s: the string %s is read as the number %r" % (self.name, self.show(value),
                                                                                         number))
        return number

    def _human_int(self, value: Any) -> Any:
        if isinstance(value, bool):
            return self._wrong_type(value, "human_readable_int")
        if isinstance(value, int):
            return self._int_range(value)
        if isinstance(value, str) and _HUMAN_INT_RE.match(value):
            return value.strip()
        return self._wrong_type(value, "human_readable_int")

    def _json(self, value: Any, kind: str) -> Any:
        if isinstance(value, str) and len(value) > MAX_JSON:
            self._add("error", "value_too_large", "%s: %d characters of JSON is more than the %d this lint allows"
                      % (self.label, len(value), MAX_JSON))
            return _DROP
        if isinstance(value, (dict, list)):
            if kind == "json_list_type" and not isinstance(value, list):
                return self._wrong_type(value, kind)
            try:
                text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError, RecursionError) as exc:
                self._add("error", "invalid_type", "%s: cannot be written as JSON: %s" % (self.label, exc))
                return _DROP
        elif isinstance(value, str):
            try:
                # Re-dumped compactly: a pretty-printed JSON string would carry newlines into argv.
                text = json.dumps(json.loads(value), separators=(",", ":"), allow_nan=False)
            except (ValueError, RecursionError):
                return self._wrong_type(value, kind)
        else:
            return self._wrong_type(value, kind)
        if len(text) > MAX_JSON:
            self._add("error", "value_too_large", "%s: %d characters of JSON is more than the %d this lint allows"
                      % (self.label, len(text), MAX_JSON))
            return _DROP
        return self._string(text, limit=MAX_JSON)

    def _string(self, value: Any, limit: int = MAX_STRING) -> Any:
        if isinstance(value, bool):
            return self._wrong_type(value, "str")
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                self._add("error", "value_not_finite",
                          "%s: %s is not a finite number" % (self.label, self.show(value)))
                return _DROP
            text = str(value)
            self._add("warning", "number_for_string",
                      "%s takes text; YAML gave the number %s, which SGLang receives as %s"
                      % (self.name, self.show(value), self.show(text)),
                      "Quote the value in YAML if you meant other text (an unquoted 012 is the number 10, 1e3 may be "
                      "a float).")
            value = text
        if not isinstance(value, str):
            return self._wrong_type(value, "str")
        bad = _BAD_CHARS.search(value)
        if bad:
            self._add("error", "control_character",
                      "%s: the value contains %s (a newline, NUL or other control character)"
                      % (self.name, "a NUL byte" if bad.group() == "\x00" else repr(bad.group())),
                      "Remove the control character; a value must be one line of printable text.")
            return _DROP
        if len(value) > limit:
            self._add("error", "value_too_large", "%s: %d characters is more than the %d this lint allows"
                      % (self.name, len(value), limit), "Check where the value comes from.")
            return _DROP
        if value.startswith("-") and self.action.get("type") in STRING_TYPES:
            self._add("error", "value_looks_like_option",
                      "%s: the value %s starts with '-': SGLang's config loader passes it on the command line, where "
                      "argparse reads it as an option (expected one argument)" % (self.name, self.show(value)),
                      "Remove the leading '-'.")
            return _DROP
        return value


# ---------------------------------------------------------------------------------------------------------------------
# The lint

class LintResult:
    """Outcome of linting one ``sglang_server_args`` dict against one release."""

    def __init__(self, release: str, table_release: str, findings: list, config: dict, args: dict,
                 secret_names: Iterable[str] = ()) -> None:
        self.release = release
        self.table_release = table_release
        self.findings = findings
        self.config = config  # option without '--' -> value: the content of SGLang's --config file
        self.args = args  # the operator's keys (underscore spelling) -> normalised value; holds secrets
        self.secret_names = sorted(set(secret_names))  # option names secret whatever they are called

    @property
    def errors(self) -> list:
        return [f for f in self.findings if f["severity"] == "error"]

    def redacted_args(self) -> dict:
        return redact_args(self.args, secret_values(self.args, self.secret_names), self.secret_names)

    def redacted_config(self) -> dict:
        return redact_args(self.config, secret_values(self.args, self.secret_names), self.secret_names)


def lint_server_args(server_args: Any, table: Mapping[str, Any], release: Optional[str] = None,
                     history: Optional[Mapping[str, Any]] = None, facts: Optional[Mapping[str, Any]] = None,
                     secret_names: Iterable[str] = ()) -> LintResult:
    """Lint a flag dict against a release's table; every problem is a finding, nothing raises on bad input.

    ``release`` is the release the operator runs (for the rules' ranges); it defaults to the table's. ``history``
    comes from build_history() and turns "unknown flag" into "removed in this release, use ...".
    ``facts`` (optional) are host facts for hardware rules: ``gpu_p2p`` (bool), ``nvlink`` (bool),
    ``service_user`` (str). ``secret_names`` are keys to treat as secret whatever their name (the keys of the
    module's no_log ``secret_args``).
    """
    tbl = FlagTable(table)
    secret_names = [option_name(n) for n in secret_names if isinstance(n, str)]
    release_text = release or tbl.release
    findings = []
    try:
        rel = parse_release(release_text)
    except ReleaseError as exc:
        return LintResult(str(release_text), tbl.release, [finding("error", "release_invalid", None, exc.message,
                                                                   exc.hint)], {}, {})
    if tbl.release:
        try:
            table_rel = parse_release(tbl.release)
        except ReleaseError:
            table_rel = rel
        if table_rel > rel:
            findings.append(finding("error", "table_newer_than_release", None,
                                    "the flag table is for SGLang %s, newer than the release linted (%s)"
                                    % (tbl.release, format_release(rel)),
                                    "Pass the table of the installed release."))
        elif table_rel < rel:
            findings.append(finding("info", "table_nearest_older", None,
                                    "no flag table was dumped for SGLang %s; linted against the nearest older one (%s)"
                                    % (format_release(rel), tbl.release),
                                    "Flags that %s added are reported as unknown; dump its table with "
                                    "tools/flags/dump_flags.py to lint them." % format_release(rel)))
    if isinstance(release_text, str) and release_text.strip().lstrip("v") != format_release(rel):
        findings.append(finding("info", "release_normalised", None,
                                "SGLang %s is linted as release %s" % (release_text.strip(), format_release(rel))))
    if server_args is None:
        server_args = {}
    if not isinstance(server_args, Mapping):
        findings.append(finding("error", "args_not_a_dict", None,
                                "sglang_server_args must be a dict of SGLang option names to values, not %s"
                                % type(server_args).__name__,
                                "Write it as a YAML mapping, e.g. {model_path: /models/x, tp_size: 2}."))
        return LintResult(format_release(rel), tbl.release, sort_findings(findings), {}, {})

    config, args, values, attempted = {}, {}, {}, set()
    seen_actions, seen_dests = {}, {}
    for key in sorted(server_args, key=lambda k: (str(k), type(k).__name__)):
        value = server_args[key]
        option, problem = normalise_key(key)
        if option is None:
            findings.append(finding("error", "bad_key", None, problem,
                                    "Use SGLang's option names, e.g. tp_size, tp-size or --tp-size."))
            continue
        name = option_name(option)
        attempted.add(name)
        if option in ("--config", "--help", "-h"):
            findings.append(finding("error", "not_settable", name,
                                    "%s cannot be set in SGLang's --config file" % option,
                                    "The collection passes the config file itself; remove %s." % name))
            continue
        if option in tbl.serve_only:
            findings.append(finding("error", "serve_only_flag", name,
                                    "%s is taken by the `sglang serve` wrapper before argparse runs, so SGLang's "
                                    "--config file cannot set it" % option,
                                    "Remove %s: the unit's ExecStart already passes --model-type llm." % name))
            continue
        action = tbl.by_option.get(option)
        if action is None:
            findings.append(_absent_flag(tbl, option, name, rel, history))
            continue
        canonical = tbl.canonical(action)
        attempted.add(option_name(canonical))
        if id(action) in seen_actions:
            findings.append(finding("error", "duplicate_flag", name,
                                    "%s is given twice (as %s and %s)" % (name, _display(seen_actions[id(action)]),
                                                                          _display(key)),
                                    "Keep one of them."))
            continue
        seen_actions[id(action)] = key
        if action["dest"] in seen_dests:
            findings.append(finding("error", "conflicting_flags", name,
                                    "%s and %s set the same SGLang setting (%s)"
                                    % (option_name(seen_dests[action["dest"]]), name, action["dest"]),
                                    "Keep one of them."))
            continue
        seen_dests[action["dest"]] = option
        kind = action.get("action")
        if kind not in STORE_CLASSES:
            hint = replacement_for(name, rel, tbl, action.get("dest")) if action.get("deprecated") else None
            findings.append(finding(
                "error", "config_unsupported", name,
                "%s%s (argparse action %s) cannot be set from SGLang's --config file: its loader takes only store "
                "and store_true options and refuses the rest (\"Unsupported config option '%s' with action '%s'\")"
                % ("deprecated " if action.get("deprecated") else "", option, kind, action["dest"], kind),
                hint or "%s cannot be set through sglang_server_args; leave it at SGLang's default." % name))
            continue
        if action.get("deprecated"):
            message = _replacement_message(name, rel) or "%s is deprecated in SGLang %s" % (option,
                                                                                            format_release(rel))
            findings.append(finding("warning", "deprecated_flag", name, message,
                                    replacement_for(name, rel, tbl, action.get("dest"))
                                    or "SGLang will remove it; check its release notes for the replacement."))
        if value is None:
            findings.append(finding("info", "unset", name, "%s is null (~): left out of the config file, so SGLang "
                                    "uses its default %s" % (name, _display(tbl.default(name)))))
            continue
        checked = _Checker(tbl, action, name, findings, name in secret_names).check(value)
        if checked is _DROP:
            continue
        config[canonical[2:]] = checked
        args[name] = checked
        values[id(action)] = checked

    for action in tbl.actions:
        if action.get("required") and option_name(tbl.canonical(action)) not in attempted:
            findings.append(finding("error", "missing_required", option_name(tbl.canonical(action)),
                                    "the following arguments are required: %s" % "/".join(action["opts"]),
                                    "Set %s in sglang_server_args." % option_name(tbl.canonical(action))))

    ctx = RuleContext(rel, tbl, values, facts)
    for item in RULES:
        if not in_release_range(rel, item.since, item.until) or not all(tbl.has(n) for n in item.requires):
            continue
        try:
            findings.extend(item.check(ctx))
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A rule bug must not hide the other findings; report it instead.
            findings.append(finding("warning", "rule_failed", None, "lint rule %s failed: %s: %s"
                                    % (item.name, type(exc).__name__, exc),
                                    "Report this to the collection's maintainers."))

    secrets = secret_values(args, secret_names)
    for item in findings:
        item["message"] = redact_text(item["message"], secrets)
        item["hint"] = redact_text(item["hint"], secrets)
    config = {key: config[key] for key in sorted(config)}
    return LintResult(format_release(rel), tbl.release, sort_findings(findings), config,
                      {key: args[key] for key in sorted(args)}, secret_names)


def _absent_flag(tbl: FlagTable, option: str, name: str, rel: Tuple[int, int, int],
                 history: Optional[Mapping[str, Any]]) -> dict:
    """A key the release does not have: removed, not yet added, an abbreviation, or a typo."""
    matches = tbl.prefix_matches(option)
    if len(matches) > 1:
        argparse_says = "ambiguous option: %s could match %s" % (option, ", ".join(matches))
    elif len(matches) == 1:
        argparse_says = "argparse would silently read %s as %s" % (option, matches[0])
    else:
        argparse_says = "unrecognized arguments: %s" % option
    release = format_release(rel)
    seen = (history or {}).get(option) or []
    older = [entry for entry in seen if _release_sort_key(entry[0]) < rel]
    newer = [entry for entry in seen if _release_sort_key(entry[0]) > rel]
    curated = REPLACEMENTS.get(name)
    if older or (curated and not newer):
        hint = replacement_for(name, rel, tbl, older[-1][1] if older else None)
        last = " (last in %s)" % older[-1][0] if older else ""
        return finding("error", "removed_flag", name,
                       "SGLang %s no longer has %s%s; it would fail with: %s" % (release, option, last, argparse_says),
                       hint or "Drop it; SGLang %s has no replacement for it." % release)
    if newer:
        return finding("error", "flag_not_in_release", name,
                       "%s is not an option of SGLang %s (first in %s); it would fail with: %s"
                       % (option, release, newer[0][0], argparse_says),
                       "Install SGLang %s or newer (sglang_install_version), or drop %s." % (newer[0][0], name))
    if len(matches) == 1:
        return finding("error", "abbreviation", name,
                       "%s is an abbreviation of %s; SGLang accepts unique prefixes, but a later release can make it "
                       "ambiguous or point it elsewhere" % (option, matches[0]),
                       "Write the full name: %s." % option_name(matches[0]))
    names = sorted({option_name(o) for o in tbl.long_options})
    close = difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.6)
    if name.lower() != name and name.lower() in names:
        close = [name.lower()]
    hint = ("Did you mean %s?" % " or ".join(close)) if close else \
        "See `sglang serve --help` of SGLang %s for the option names." % release
    return finding("error", "ambiguous_flag" if len(matches) > 1 else "unknown_flag", name, argparse_says, hint)
