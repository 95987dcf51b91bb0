# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Regenerate a flag table (data/sglang_flags/<release>.json) from the SGLang installed in this Python.

Maintainer tool, run once per SGLang release with the Python of a venv that has that release (torch must
import; no GPU is used):

    <venv>/bin/python tools/dev/flags/dump_flags.py data/sglang_flags/            # writes <release>.json there
    <venv>/bin/python tools/dev/flags/dump_flags.py data/sglang_flags/0.5.23.json # explicit file name
    <venv>/bin/python tools/dev/flags/dump_flags.py --compare data/sglang_flags/0.5.22.json data/sglang_flags/

How: it executes ``DUMP_SCRIPT`` of plugins/module_utils/flags/dump.py, the same text the sglang_server role
runs on a host whose SGLang release has no bundled table (a release newer than the collection): SGLang's own
parser is captured inside ``prepare_server_args()`` and described action by action (see that file).

Output: compact JSON, the header on the first line, then one action per line sorted by option name, so a new
release's table diffs readably against the previous one. The format is read by
``plugins/module_utils/flags/table.py`` (``FlagTable``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Optional

DUMP_FILE = Path(__file__).resolve().parents[3] / "plugins" / "module_utils" / "flags" / "dump.py"


def _load_dump_module():
    """plugins/module_utils/flags/dump.py, by path (this script runs in an SGLang venv without the collection)."""
    spec = importlib.util.spec_from_file_location("gpufleet_flags_dump", DUMP_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_DUMP = _load_dump_module()
to_text = _DUMP.to_text
HEADER_KEYS = _DUMP.HEADER_KEYS


def dump() -> dict:
    """The flag table of the SGLang installed in this Python (DUMP_SCRIPT's dump())."""
    namespace = {"__name__": "gpufleet_dump_script"}
    exec(compile(_DUMP.DUMP_SCRIPT, str(DUMP_FILE), "exec"), namespace)  # pylint: disable=exec-used
    return namespace["dump"]()


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
