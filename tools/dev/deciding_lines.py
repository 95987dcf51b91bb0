# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write tests/data/startup_corpus/deciding_lines.json: for each developed failed start the scanner reads right, the
line that decided its cause, when that line alone gives the same cause.

Why: the cause rules are a table of patterns, many alternatives each, and the corpus test that checks them on real logs
reads about 600 logs through the scanner twice (half a minute). These lines let a test check every rule's alternatives
on real words in well under a second (test_causes_deciding_lines.py), which is what mutation testing of
startup/causes needs (every mutant of the table runs its whole test list). The labels stay in corpus.json; this file
only says which line of a log to read, so it may lag behind the rules: rerun after rule work to take in new lines.

    python tools/dev/deciding_lines.py      (from the checkout, after `make venv`)
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

# pylint: disable=wrong-import-position
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import cause_in_tiers, decisive  # noqa: E402
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.lines import PasteMargin, wrap_width  # noqa: E402
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner  # noqa: E402

CORPUS = os.path.join(ROOT, "tests", "data", "startup_corpus")


def ended_scanner(text: str) -> StartupLogScanner:
    """The scanner after a whole log, read as the launch reads a failed start once its exit is known (as
    scan_startup_log sets it up); the development tools that reach into its evidence start here."""
    lines = text.splitlines()
    margin = PasteMargin(lines)
    scanner = StartupLogScanner(wrap_width=wrap_width([margin.strip(line) for line in lines]), margin=margin.margin)
    for line in lines:
        scanner.feed(line)
    scanner.flush()
    scanner.close(exited=True)
    return scanner


def write_corpus_json(name: str, items: list) -> None:
    """Write a reviewed list next to the corpus (non-ASCII escaped: the texts stay as they are, the file plain)."""
    with open(os.path.join(CORPUS, name), "w", encoding="utf-8") as handle:
        json.dump(items, handle, indent=1)
        handle.write("\n")
    print("%s: %d entries" % (name, len(items)))


def deciding_line(text: str) -> "tuple[str, str | None]":
    """(the cause, the line that decided it) for a log read as the launch reads a failed start once its exit is known.

    Reads the scanner's evidence the way its verdict does (its tiers, then the rules): the scanner returns the cause,
    not the line, so this reaches into it (a development tool, not an interface)."""
    scanner = ended_scanner(text)
    tiers = scanner._tiers(scanner._evidence_traceback())  # pylint: disable=protected-access
    cause, line, _tier = cause_in_tiers(tiers, "\n".join(scanner._import_errors))  # pylint: disable=protected-access
    return cause, line


def main() -> int:
    with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as handle:
        rows = json.load(handle)
    found = []
    for row in rows:
        if row["split"] == "test" or row["outcome"] != "failed start" or row["cause"] == "unknown":
            continue  # the held-out split is never read here; unknown has no deciding line
        with open(os.path.join(CORPUS, row["file"]), "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        cause, line = deciding_line(text)
        if cause == row["cause"] and line and decisive(line)[0] == cause and line in text:
            found.append({"file": row["file"], "line": line})
    write_corpus_json("deciding_lines.json", found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
