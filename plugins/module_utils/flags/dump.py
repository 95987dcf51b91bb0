# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dump a flag table (the format of data/sglang_flags/<release>.json) from the SGLang installed in a venv.

Why here: a release that came out after this collection has no bundled table. The sglang_server role then
runs ``DUMP_SCRIPT`` with the host's venv Python, exactly as the shipped tables were made
(tools/dev/flags/dump_flags.py executes this same text), keeps the table on the controller and lints with it.

How: SGLang builds its parser inside ``prepare_server_args()``; the script lets that run until the parser's
``parse_args`` is called, takes the parser and stops, so the table lists exactly the options ``sglang serve``
accepts (plugins loaded first, as launch_server does). Help texts are left out. An action is deprecated when
its class is one of SGLang's Deprecated* actions, when its help starts with "Deprecated" / "[Deprecated]" /
"(Deprecated" / "Note: --x is deprecated", or when SGLang's server-args sources warn "--x is deprecated".
``serve_only`` lists what the ``sglang serve`` wrapper takes off argv first: ``--model-type`` and a leading
positional model path.

Standard library only, and nothing of the collection: the text runs in the service venv, and the maintainer
script loads this file by path.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Tuple

TABLE_MARKER = "GPUFLEET_FLAG_TABLE="
HEADER_KEYS = ("sglang_version", "prog", "allow_abbrev", "serve_only")

# Executed as ``python -c DUMP_SCRIPT <timeout>`` (prints TABLE_MARKER + the table as JSON), or exec()'d by
# tools/dev/flags/dump_flags.py with a __name__ other than "__main__" to call dump().
DUMP_SCRIPT = r'''
import argparse
import ast
import inspect
import json
import re
import sys
from pathlib import Path

DEPRECATED_HELP = re.compile(r"^\W*(?:note:\s*--?[\w-]+\s+is\s+)?deprecated\b", re.IGNORECASE)
DEPRECATED_SOURCE = re.compile(r"(--[a-z0-9][a-z0-9-]*)['\"`]?\s+(?:is|are)\s+(?:now\s+)?deprecated")


class _GotParser(Exception):
    """Raised from the patched parse_args to carry SGLang's parser out of prepare_server_args."""

    def __init__(self, parser):
        super().__init__("parser captured")
        self.parser = parser


def _tolerate_known_configs():
    """Releases 0.5.12-0.5.18 register HF configs that newer transformers ship too; make that a no-op."""
    try:
        import transformers
    except ImportError:
        return
    original = transformers.AutoConfig.register

    def register(*args, **kwargs):
        kwargs.setdefault("exist_ok", True)
        return original(*args, **kwargs)

    transformers.AutoConfig.register = staticmethod(register)


def capture_parser():
    """SGLang's own server-args parser, as prepare_server_args() builds it."""
    sys.argv[0] = "sglang"  # 0.5.9 sets no prog: argparse then names it after argv[0], as `sglang serve` does
    from sglang.srt import server_args

    try:
        from sglang.srt.plugins import load_plugins
    except ImportError:
        load_plugins = None
    if load_plugins is not None:
        load_plugins()

    original = argparse.ArgumentParser.parse_args

    def stop(self, args=None, namespace=None):
        raise _GotParser(self)

    argparse.ArgumentParser.parse_args = stop
    try:
        server_args.prepare_server_args([])
    except _GotParser as got:
        return got.parser
    finally:
        argparse.ArgumentParser.parse_args = original
    raise RuntimeError("prepare_server_args() returned without calling parse_args(); this SGLang builds its "
                       "parser differently, update plugins/module_utils/flags/dump.py")


def deprecated_in_sources(package_dir):
    """Options that SGLang's server-args code warns about as deprecated ("--x is deprecated")."""
    files = [package_dir / "srt" / "server_args.py"]
    files += sorted((package_dir / "srt" / "arg_groups").rglob("*.py"))
    found = set()
    for path in files:
        if path.is_file():
            found.update(DEPRECATED_SOURCE.findall(path.read_text(encoding="utf-8", errors="replace")))
    return found


def plain(value):
    """A JSON value for a default or choice: itself when JSON can hold it, else its repr."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def describe(action, deprecated_options):
    """One table row for an argparse action."""
    choices = action.choices
    if choices is not None:
        choices = sorted(choices) if isinstance(choices, (set, frozenset)) else list(choices)
        choices = [c if isinstance(plain(c), (str, int, float, bool)) else str(c) for c in choices]
    kind = type(action).__name__
    type_name = None
    if action.type is not None:
        type_name = getattr(action.type, "__name__", None) or repr(action.type)
    deprecated = ("Deprecated" in kind or bool(DEPRECATED_HELP.match(action.help or ""))
                  or any(option in deprecated_options for option in action.option_strings))
    return {
        "opts": list(action.option_strings),
        "dest": action.dest,
        "default": plain(action.default),
        "type": type_name,
        "choices": choices,
        "nargs": action.nargs,
        "action": kind,
        "required": bool(action.required),
        "deprecated": deprecated,
    }


def serve_wrapper_options():
    """What `sglang serve` strips from argv before argparse: --model-type and a positional model path."""
    try:
        from sglang.cli import serve
    except ImportError:
        return []
    rows = []
    if hasattr(serve, "_extract_model_type_override"):
        choices = ["auto", "llm", "diffusion"]
        if hasattr(serve, "_create_backend_registry"):  # 0.5.18+: built-in backends plus plugins
            choices = ["auto"] + list(serve._create_backend_registry().available_names)
        else:  # up to 0.5.15 the accepted names are a literal tuple inside the function
            source = inspect.getsource(serve._extract_model_type_override)
            literal = re.search(r"not in\s*(\([^)]*\)|\[[^\]]*\])", source)
            if literal:
                choices = list(ast.literal_eval(literal.group(1)))
        rows.append({"opts": ["--model-type"], "dest": "model_type", "default": "auto", "type": "str",
                     "choices": choices, "nargs": None, "action": "serve_wrapper", "required": False,
                     "deprecated": False})
    if hasattr(serve, "_normalize_positional_model_path"):
        rows.append({"opts": [], "dest": "model_path", "default": None, "type": "str", "choices": None,
                     "nargs": "?", "action": "serve_positional", "required": False, "deprecated": False})
    return rows


def installed_version():
    """The version pip recorded for the sglang distribution; else the package's own (the stand-in's)."""
    try:
        from importlib.metadata import version
        return version("sglang")
    except Exception:
        import sglang
        return str(getattr(sglang, "__version__", ""))


def dump():
    """The flag table of the installed SGLang."""
    _tolerate_known_configs()
    parser = capture_parser()
    import sglang

    deprecated = deprecated_in_sources(Path(sglang.__file__).parent)
    actions = [describe(action, deprecated) for action in parser._actions]
    actions.sort(key=lambda row: row["opts"][0] if row["opts"] else row["dest"])
    return {"sglang_version": installed_version(), "prog": parser.prog, "allow_abbrev": parser.allow_abbrev,
            "serve_only": serve_wrapper_options(), "actions": actions}


if __name__ == "__main__":
    import signal
    signal.alarm(int(sys.argv[1]) if len(sys.argv) > 1 else 120)
    table = dump()
    print("GPUFLEET_FLAG_TABLE=" + json.dumps(table, separators=(",", ":"), sort_keys=False), flush=True)
'''


def dump_command(python: str, timeout: int, timeout_bin: Optional[str] = None) -> list:
    """The argv that dumps the venv's flag table, bounded by ``timeout`` seconds."""
    command = [python, "-c", DUMP_SCRIPT, str(max(1, int(timeout)))]
    if timeout_bin:
        command = [timeout_bin, "--kill-after=5", str(max(1, int(timeout)) + 5)] + command
    return command


def read_dump_output(rc: int, stdout: str, stderr: str) -> Tuple[Optional[dict], str]:
    """(the dumped table, '') from the script's output, or (None, what went wrong)."""
    for line in (stdout or "").splitlines():
        if line.startswith(TABLE_MARKER):
            try:
                table = json.loads(line[len(TABLE_MARKER):])
            except ValueError as exc:
                return None, "the dump printed a table that is not JSON: %s" % exc
            if not isinstance(table, dict) or not isinstance(table.get("actions"), list) \
                    or not table.get("sglang_version"):
                return None, "the dump printed something that is not a flag table"
            return table, ""
    lines = [line for line in (stderr or "").splitlines() if line.strip()]
    return None, "the flag-table dump failed (rc %s): %s" % (rc, lines[-1] if lines else "no output")


def to_text(table: dict) -> str:
    """Header on one line, then one action per line: stable and diff-friendly (the bundled tables' format)."""
    compact: Any = {"separators": (",", ":")}
    head = json.dumps({key: table[key] for key in HEADER_KEYS}, **compact)
    rows = ",\n".join(json.dumps(row, **compact) for row in table["actions"])
    text = head[:-1] + ',"actions":[\n' + rows + "\n]}\n"
    if json.loads(text) != {**{key: table[key] for key in HEADER_KEYS}, "actions": table["actions"]}:
        raise ValueError("the rendered table does not read back as itself")
    return text
