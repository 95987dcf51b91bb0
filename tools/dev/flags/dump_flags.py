# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Regenerate a flag table (data/sglang_flags/<release>.json) from the SGLang installed in this Python.

Maintainer tool, run once per SGLang release with the Python of a venv that has that release (torch must
import; no GPU is used):

    <venv>/bin/python tools/dev/flags/dump_flags.py data/sglang_flags/            # writes <release>.json there
    <venv>/bin/python tools/dev/flags/dump_flags.py data/sglang_flags/0.5.23.json # explicit file name
    <venv>/bin/python tools/dev/flags/dump_flags.py --compare data/sglang_flags/0.5.22.json data/sglang_flags/

How: SGLang builds its parser inside ``prepare_server_args()``; this script lets that run until the parser's
``parse_args`` is called, takes the parser and stops, so the table lists exactly the options that
``sglang serve`` and ``python -m sglang.launch_server`` accept (plugins loaded first, as launch_server does).
Help texts are left out. An action is marked deprecated when its class is one of SGLang's Deprecated* actions,
when its help starts with "Deprecated" / "[Deprecated]" / "(Deprecated" / "Note: --x is deprecated", or when
SGLang's server-args sources warn "--x is deprecated". ``serve_only`` lists what the ``sglang serve`` wrapper
takes off argv before argparse: ``--model-type`` and a leading positional model path.

Output: compact JSON, the header on the first line, then one action per line sorted by option name, so a new
release's table diffs readably against the previous one. The format is read by
``plugins/module_utils/sglang_flags.py`` (``FlagTable``).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

DEPRECATED_HELP = re.compile(r"^\W*(?:note:\s*--?[\w-]+\s+is\s+)?deprecated\b", re.IGNORECASE)
DEPRECATED_SOURCE = re.compile(r"(--[a-z0-9][a-z0-9-]*)['\"`]?\s+(?:is|are)\s+(?:now\s+)?deprecated")
HEADER_KEYS = ("sglang_version", "prog", "allow_abbrev", "serve_only")


class _GotParser(Exception):
    """Raised from the patched parse_args to carry SGLang's parser out of prepare_server_args."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__("parser captured")
        self.parser = parser


def _tolerate_known_configs() -> None:
    """Releases 0.5.12-0.5.18 register HF configs that newer transformers ship too; make that a no-op."""
    try:
        import transformers  # pylint: disable=import-outside-toplevel
    except ImportError:
        return
    original = transformers.AutoConfig.register

    def register(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("exist_ok", True)
        return original(*args, **kwargs)

    transformers.AutoConfig.register = staticmethod(register)


def capture_parser() -> argparse.ArgumentParser:
    """SGLang's own server-args parser, as prepare_server_args() builds it."""
    sys.argv[0] = "sglang"  # 0.5.9 sets no prog: argparse then names it after argv[0], as `sglang serve` does
    from sglang.srt import server_args  # pylint: disable=import-outside-toplevel

    try:
        from sglang.srt.plugins import load_plugins  # pylint: disable=import-outside-toplevel
    except ImportError:
        load_plugins = None
    if load_plugins is not None:
        load_plugins()

    original = argparse.ArgumentParser.parse_args

    def stop(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        raise _GotParser(self)

    argparse.ArgumentParser.parse_args = stop
    try:
        server_args.prepare_server_args([])
    except _GotParser as got:
        return got.parser
    finally:
        argparse.ArgumentParser.parse_args = original
    raise RuntimeError("prepare_server_args() returned without calling parse_args(); this SGLang builds its "
                       "parser differently, update tools/dev/flags/dump_flags.py")


def deprecated_in_sources(package_dir: Path) -> set:
    """Options that SGLang's server-args code warns about as deprecated ("--x is deprecated")."""
    files = [package_dir / "srt" / "server_args.py"]
    files += sorted((package_dir / "srt" / "arg_groups").rglob("*.py"))
    found = set()
    for path in files:
        if path.is_file():
            found.update(DEPRECATED_SOURCE.findall(path.read_text(encoding="utf-8", errors="replace")))
    return found


def plain(value: Any) -> Any:
    """A JSON value for a default or choice: itself when JSON can hold it, else its repr."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def describe(action: argparse.Action, deprecated_options: Iterable[str]) -> dict:
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


def serve_wrapper_options() -> list:
    """What `sglang serve` strips from argv before argparse: --model-type and a positional model path."""
    try:
        from sglang.cli import serve  # pylint: disable=import-outside-toplevel
    except ImportError:
        return []
    rows = []
    if hasattr(serve, "_extract_model_type_override"):
        choices = ["auto", "llm", "diffusion"]
        if hasattr(serve, "_create_backend_registry"):  # 0.5.18+: built-in backends plus plugins
            choices = ["auto"] + list(serve._create_backend_registry().available_names)  # pylint: disable=W0212
        else:  # up to 0.5.15 the accepted names are a literal tuple inside the function
            source = inspect.getsource(serve._extract_model_type_override)  # pylint: disable=protected-access
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


def installed_version() -> str:
    """The version pip recorded for the sglang distribution."""
    from importlib.metadata import version  # pylint: disable=import-outside-toplevel

    return version("sglang")


def dump() -> dict:
    """The flag table of the installed SGLang."""
    _tolerate_known_configs()
    parser = capture_parser()
    import sglang  # pylint: disable=import-outside-toplevel

    deprecated = deprecated_in_sources(Path(sglang.__file__).parent)
    actions = [describe(action, deprecated) for action in parser._actions]  # pylint: disable=protected-access
    actions.sort(key=lambda row: row["opts"][0] if row["opts"] else row["dest"])
    return {"sglang_version": installed_version(), "prog": parser.prog, "allow_abbrev": parser.allow_abbrev,
            "serve_only": serve_wrapper_options(), "actions": actions}


def to_text(table: dict) -> str:
    """Header on one line, then one action per line: stable and diff-friendly."""
    compact = {"separators": (",", ":")}
    head = json.dumps({key: table[key] for key in HEADER_KEYS}, **compact)
    rows = ",\n".join(json.dumps(row, **compact) for row in table["actions"])
    text = head[:-1] + ',"actions":[\n' + rows + "\n]}\n"
    if json.loads(text) != {**{key: table[key] for key in HEADER_KEYS}, "actions": table["actions"]}:
        raise RuntimeError("the rendered table does not read back as itself")
    return text


def compare(old: dict, new: dict) -> str:
    """Options added and removed between two tables, for the release notes of a table update."""
    before = {o for row in old["actions"] for o in row["opts"]}
    after = {o for row in new["actions"] for o in row["opts"]}
    lines = ["%s -> %s: %d -> %d options" % (old.get("sglang_version"), new.get("sglang_version"), len(before),
                                             len(after))]
    lines += ["  + %s" % o for o in sorted(after - before)]
    lines += ["  - %s" % o for o in sorted(before - after)]
    return "\n".join(lines)


def output_path(target: str, version: str) -> str:
    """TARGET/<release>.json for a directory, TARGET itself otherwise."""
    return os.path.join(target, version + ".json") if os.path.isdir(target) else target


def main(argv: Optional[list] = None) -> int:
    """Dump the installed SGLang's table to the target; optionally compare it with an older one."""
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    cli.add_argument("target", help="output file, or a directory to write <release>.json into")
    cli.add_argument("--compare", metavar="OLD_JSON", help="also print the options added/removed since this table")
    options = cli.parse_args(argv)
    table = dump()
    text = to_text(table)
    path = output_path(options.target, table["sglang_version"])
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    print("%s: %d actions -> %s" % (table["sglang_version"], len(table["actions"]), path), file=sys.stderr)
    if options.compare:
        with open(options.compare, encoding="utf-8") as handle:
            print(compare(json.load(handle), table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
