# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang instances a host runs, and what is wrong with them before anything on the host changes.

Why functions and not Jinja: the role's settings check was five chained filters in an ``assert`` that said "one
of these is wrong" and printed every name and port; only Molecule ever ran it. Here each rule is a small
function that names the exact variable at fault (``sglang_server_instances[1].name``) and what to do, and the
unit tests go through every rule.

Two ways to give the instances, both as before:

- ``sglang_server_instances``: a non-empty list of ``{name, args, env, api_key, probe}``, taken as it is;
- otherwise one instance built from ``sglang_server_instance``, ``sglang_server_args``, ``sglang_server_env``
  and ``sglang_server_api_key``.

The rules: names unique and matching ``NAME_PATTERN`` as a whole (``re.fullmatch``: Jinja's ``match`` let a
trailing newline through, and a name is part of a unit name and of paths), each instance's args a mapping, each
instance its own port (``args.port``, 30000 when not set), every environment key (of each instance's env and of
``sglang_server_env``) matching ``ENV_KEY_PATTERN``, every environment value free of control characters (a
systemd environment file cannot carry a newline or a NUL: the first was silently turned into a space, the second
broke the unit). An env that is not a mapping is reported as such. With the host's settings given
(:func:`host_messages`): the service user is not root (by name or by uid 0), and the config and state folders are
absolute, normalised paths other than ``/`` (no ``..`` that would take the instance's files elsewhere).

Runs on the controller (filters ``gpufleet.sglang.server_instances`` and ``server_instances_check``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
ENV_KEY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
DEFAULT_PORT = 30000

INSTANCES_VAR = "sglang_server_instances"
SINGLE_VARS = {"name": "sglang_server_instance", "args": "sglang_server_args", "env": "sglang_server_env"}
COMMON_ENV_VAR = "sglang_server_env"


class ServerInstancesError(ValueError):
    """The instance settings have a shape no rule can even look at (not a list)."""


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def server_instances(instances: Any, name: Any, args: Any, env: Any, api_key: Any) -> List[Any]:
    """The instance list: ``sglang_server_instances`` when it has items, else the single instance.

    The items are returned as given (no defaults filled in): the role reads ``item.args | default({})`` and
    ``item.api_key | default(sglang_server_api_key)`` itself, and an instance without its own api_key keeps
    falling back to the role's.
    """
    if instances is None or not _is_list(instances):
        raise ServerInstancesError("%s must be a list of {name, args, env, api_key}, not %s" % (INSTANCES_VAR, type(instances).__name__))
    if instances:
        return list(instances)
    return [{"name": name, "args": args, "env": env, "api_key": api_key}]


def _entries(instances: Any, name: Any, args: Any, env: Any) -> Tuple[bool, List[Tuple[Dict[str, str], Any]]]:
    """(single, [(variable names of the instance's fields, the instance)]) in the order given."""
    items = server_instances(instances, name, args, env, None)
    if not instances:
        return True, [(dict(SINGLE_VARS, port=SINGLE_VARS["args"] + ".port", item=SINGLE_VARS["name"]), items[0])]
    entries = []
    for index, item in enumerate(items):
        prefix = "%s[%d]" % (INSTANCES_VAR, index)
        entries.append(({"item": prefix, "name": prefix + ".name", "args": prefix + ".args", "port": prefix + ".args.port",
                         "env": prefix + ".env"}, item))
    return False, entries


def _shape_messages(entries: List[Tuple[Dict[str, str], Any]]) -> List[str]:
    """An instance of the list that is not a mapping, or one without a name: nothing else can be read from it."""
    messages = []
    for names, item in entries:
        if not isinstance(item, Mapping):
            messages.append("%s: must be a mapping with name and args (and optionally env, api_key, probe), not a %s."
                            % (names["item"], type(item).__name__))
        elif "name" not in item:
            messages.append("%s: not set; every instance needs a name (it names its unit sglang-<name>.service and its files)."
                            % names["name"])
    return messages


def name_messages(entries: List[Tuple[Dict[str, str], Any]]) -> List[str]:
    """Rule 1 and 2: each name matches NAME_PATTERN and no two instances share one (compared as text)."""
    messages = []
    seen: Dict[str, str] = {}
    for names, item in entries:
        name = str(item["name"])
        if not re.fullmatch(NAME_PATTERN[1:-1], name):
            messages.append("%s: %r is not a usable instance name; use 1 to 32 of a-z, 0-9, '_' and '-', starting with a "
                            "letter or a digit (it names the unit sglang-<name>.service and the instance's files)." % (names["name"], name))
        if name in seen:
            messages.append("%s: %r is already the name of %s; give each instance its own name." % (names["name"], name, seen[name]))
        else:
            seen[name] = names["item"]
    return messages


def args_messages(entries: List[Tuple[Dict[str, str], Any]]) -> List[str]:
    """Rule 3: each instance's args (absent counts as {}) is a mapping of SGLang options."""
    messages = []
    for names, item in entries:
        args = item.get("args", {})
        if not isinstance(args, Mapping):
            messages.append("%s: must be a mapping of SGLang options (option: value, e.g. tp_size: 2), not a %s."
                            % (names["args"], type(args).__name__))
    return messages


def port_messages(entries: List[Tuple[Dict[str, str], Any]]) -> List[str]:
    """Rule 4: no two instances listen on the same port (args.port, DEFAULT_PORT when not set).

    Instances whose args are not a mapping are left to rule 3: they have no port to compare.
    """
    messages = []
    seen: List[Tuple[Any, str]] = []
    for names, item in entries:
        args = item.get("args", {})
        if not isinstance(args, Mapping):
            continue
        port = args.get("port", DEFAULT_PORT)
        owner = next((other for value, other in seen if value == port), None)
        if owner is not None:
            unset = "" if "port" in args else " (not set, so the default %d)" % DEFAULT_PORT
            messages.append("%s: %s%s is already the port of %s; give each instance its own port in its args."
                            % (names["port"], port, unset, owner))
        seen.append((port, names["item"]))
    return messages


def _env_key_messages(variable: str, env: Any) -> List[str]:
    """Rule 5 for one environment mapping."""
    if not isinstance(env, Mapping):
        return ["%s: must be a mapping of environment variables (NAME: value), not a %s." % (variable, type(env).__name__)]
    return ["%s: %r is not a shell-style variable name (letters, digits and '_', not starting with a digit); rename or "
            "remove it." % (variable, str(key)) for key in env if not re.fullmatch(ENV_KEY_PATTERN[1:-1], str(key))]


CONTROL_NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL"}


def _control_character(text: str) -> Optional[Tuple[int, str]]:
    """The first control character of a value (C0, DEL or C1) with its position, or None."""
    for index, char in enumerate(text):
        if ord(char) < 32 or 127 <= ord(char) < 160:
            return index, CONTROL_NAMES.get(char, "the control character U+%04X" % ord(char))
    return None


def _env_value_messages(variable: str, env: Any) -> List[str]:
    """Rule 6 for one environment mapping (one that is not a mapping is rule 5's)."""
    if not isinstance(env, Mapping):
        return []
    messages = []
    for key, value in env.items():
        found = _control_character(str(value))
        if found is not None:
            messages.append("%s.%s: the value holds %s (at character %d); a systemd environment file cannot carry it - "
                            "remove it or pass the value another way (a file the service reads)." % (variable, key, found[1], found[0]))
    return messages


def env_messages(entries: List[Tuple[Dict[str, str], Any]], common_env: Any, single: bool) -> List[str]:
    """Rule 5: every key of each instance's env (absent counts as {}) and of sglang_server_env is a shell-style name.

    With a single instance its env is sglang_server_env itself, so that is read once.
    """
    messages = []
    for names, item in entries:
        messages += _env_key_messages(names["env"], item.get("env", {}))
        messages += _env_value_messages(names["env"], item.get("env", {}))
    if not single:
        messages += _env_key_messages(COMMON_ENV_VAR, common_env)
        messages += _env_value_messages(COMMON_ENV_VAR, common_env)
    return messages


USER_VAR = "sglang_server_user"


def host_messages(user: Any, uid: Any = None, paths: Optional[Mapping[str, Any]] = None) -> List[str]:
    """The host-side rules: the service user is not root, the folders stay where they are named.

    ``uid`` is the user's uid on the host when it exists there (None when it does not yet: the role creates it as a
    system user, never uid 0); ``paths`` maps the folder variables to their values.
    """
    messages = []
    name = str(user)
    if name in ("root", "0") or (uid is not None and str(uid) == "0"):
        what = "is root" if name in ("root", "0") else "has uid 0 on this host"
        messages.append("%s: %r %s; SGLang must run as an unprivileged system user (the default 'sglang'), so that a "
                        "hole in the server is not root on the box." % (USER_VAR, name, what))
    for variable, value in sorted((paths or {}).items()):
        text = str(value)
        if not text.startswith("/") or text.rstrip("/") == "" or posixpath.normpath(text) != text.rstrip("/") or "//" in text:
            messages.append("%s: %r is not an absolute, normalised folder other than '/'; write it as one (no '..', '.' or "
                            "'//'), so the instances' files stay inside it." % (variable, text))
        elif _control_character(text) is not None:
            messages.append("%s: %r holds a control character; name a plain folder." % (variable, text))
    return messages


def server_instances_check(instances: Any, name: Any, args: Any, env: Any, user: Any = None, uid: Any = None,
                           paths: Optional[Mapping[str, Any]] = None) -> List[str]:
    """One message per problem, each naming the variable at fault and what to do; [] when the settings are usable.

    ``env`` is ``sglang_server_env``: the single instance's environment, and with a list of instances the
    environment every one of them gets on top of its own. ``user``, ``uid`` and ``paths`` (when given) are checked
    by :func:`host_messages`.
    """
    host = host_messages(user, uid, paths) if user is not None else []
    try:
        single, entries = _entries(instances, name, args, env)
    except ServerInstancesError as exc:
        return ["%s." % exc] + host
    shape = _shape_messages(entries)
    if shape:
        return shape + host
    return (name_messages(entries) + args_messages(entries) + port_messages(entries) + env_messages(entries, env, single)
            + host)
