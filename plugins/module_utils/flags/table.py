# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One release's flag table (the format of data/sglang_flags/<release>.json), indexed, and option-name spelling.

Standard library only: modules ship this file to the target.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import display
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import release_sort_key
from ansible_collections.gpufleet.sglang.plugins.module_utils.yaml_text import CONTROL_CHARS_RE, OPTION_KEY_RE

# argparse action classes that SGLang's --config loader turns into CLI arguments. Every other class
# (BooleanOptionalAction, LoRAPathAction, the Deprecated* actions) is refused with
# "Unsupported config option '<dest>' with action '<class>'" (sglang/srt/utils/server_args_config_parser.py).
STORE_CLASSES = ("_StoreAction", "_StoreTrueAction")


class FlagTableError(ValueError):
    """The flag table is not in the format of data/sglang_flags/<release>.json."""


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
    for release in sorted(tables, key=release_sort_key):
        table = tables[release]
        for action in table.get("actions") or ():
            for option in action.get("opts") or ():
                if wanted is not None and option not in wanted:
                    continue
                history.setdefault(option, []).append(
                    [str(table.get("sglang_version") or release), action.get("dest"), action.get("action"),
                     bool(action.get("deprecated"))])
    return history


def normalise_key(key: Any) -> Tuple[Optional[str], Optional[str]]:
    """'tp_size' / 'tp-size' / '--tp-size' -> ('--tp-size', None); bad keys -> (None, why)."""
    if not isinstance(key, str):
        return None, "option names are strings, not %s" % type(key).__name__
    text = key[2:] if key.startswith("--") else key
    if CONTROL_CHARS_RE.search(text) or not text:
        return None, "the option name %s is empty or contains control characters" % display(key)
    if "=" in text:
        return None, "the option name %s contains '=': give the value as the dict value" % display(key)
    if not OPTION_KEY_RE.match(text):
        return None, "%s is not an SGLang option name (letters, digits, '_' and '-' only)" % display(key)
    return "--" + text.replace("_", "-"), None
