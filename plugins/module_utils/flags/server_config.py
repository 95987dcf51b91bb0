# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render the YAML file that SGLang reads with ``--config``, byte-for-byte deterministic.

Why byte-for-byte: the file decides whether the service restarts, so unchanged arguments must give identical
bytes: keys in sorted order, each scalar spelled by module_utils/yaml_text.py, no timestamps.

What it writes: a flat mapping of option names (``tp-size``, as ``sglang serve --<key>`` spells them; SGLang's
loader turns each key into ``--<key>``) to plain scalars (booleans, integers, floats, strings) or block lists of
scalars. Strings are left plain only when YAML 1.1 (PyYAML, which SGLang uses) is certain to read them back as
the same string; otherwise they are single-quoted, or double-quoted with escapes when they hold non-ASCII
characters, so the file is pure ASCII whatever the service's locale. Values that no YAML scalar can carry
faithfully through SGLang (control characters, NaN, null, nested structures) raise ``ConfigRenderError``;
``flags.lint.lint_server_args`` reports those as findings first, so a linted dict always renders.

Secrets (``api_key``...) are written here, and only here: the file is installed with mode 0640.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from ansible_collections.gpufleet.sglang.plugins.module_utils.yaml_text import (
    OPTION_KEY_RE,
    ScalarError,
    yaml_scalar,
    yaml_string,
)

# Raised for a config that cannot be rendered faithfully; the same class as yaml_text's, under the name callers know.
ConfigRenderError = ScalarError

HEADER = "# SGLang launch flags (sglang serve --config), rendered by gpufleet.sglang from sglang_server_args.\n" \
         "# Do not edit: the next deploy overwrites it.\n"


def render_server_config(config: Mapping[str, Any], header: bool = True) -> str:
    """The --config file for a flat mapping of option names to scalars or lists of scalars, keys sorted."""
    if not isinstance(config, Mapping):
        raise ConfigRenderError("the config is a mapping of option names to values, not %s" % type(config).__name__)
    lines = [HEADER] if header else []
    if not config:
        lines.append("{}\n")
        return "".join(lines)
    for key in sorted(config, key=str):
        if not isinstance(key, str) or not OPTION_KEY_RE.match(key):
            raise ConfigRenderError("%r is not an option name" % (key,))
        value = config[key]
        name = yaml_string(key)
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
