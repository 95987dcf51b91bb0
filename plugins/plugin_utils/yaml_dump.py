# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""YAML text for reports the controller writes, through PyYAML (an ansible-core dependency, so always there).

Why not module_utils/yaml_text.py: that emitter exists because targets have no PyYAML; the controller does, and
PyYAML's safe dumper is what Ansible itself reads back, so what it writes pastes into an inventory unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

import yaml

SERVER_ARGS_KEY = "sglang_server_args"


def plain(value: Any) -> Any:
    """The value as plain JSON types: Ansible hands filters its own tagged str/float/dict subclasses, which
    PyYAML's safe dumper refuses ("cannot represent an object")."""
    return json.loads(json.dumps(value))


def flow_yaml(value: Any) -> str:
    """One value on one line, as YAML flow text that reads back as the same value (``true``, ``0.99``, ``[1, 2]``)."""
    value = plain(value)
    text = _flow(value)
    if "\n" in text:  # a string with a line break: PyYAML folds plain and single-quoted scalars over lines
        text = _flow(value, style='"')
    return text


def _flow(value: Any, style: Optional[str] = None) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, default_style=style, width=1 << 30, allow_unicode=False,
                          sort_keys=False)
    return text[:-len("\n...\n")] if text.endswith("\n...\n") else text.rstrip("\n")


def args_yaml(args: Dict[str, Any], key: str = SERVER_ARGS_KEY) -> str:
    """``sglang_server_args:`` with one indented line per option, in the given order, ready to paste into an inventory."""
    return yaml.safe_dump({key: plain(dict(args))}, default_flow_style=False, width=1 << 30, allow_unicode=False,
                          sort_keys=False, indent=2)
