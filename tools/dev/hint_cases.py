# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write tests/data/startup_corpus/hint_cases.json: for each distinct hint the developed failed starts get, the
shortest case that gets it (the inputs the scanner hands to hint_for, and the hint).

Why: a hint is the sentence an operator acts on, built from many literal pieces and branches; the corpus test checks
causes, not hints, and reads every log through the scanner (half a minute). These cases let a test check every hint
real logs reach, word for word, in well under a second (test_causes_hint_cases.py), which is what mutation testing of
startup/causes needs. The file is reviewed like code: a hint that changes shows as a diff here, on purpose.

    python tools/dev/hint_cases.py      (from the checkout, after `make venv`)
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

# pylint: disable=wrong-import-position
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import hint_for  # noqa: E402
# deciding_lines sits in this folder (tools/dev), which is on sys.path when this script runs.
from deciding_lines import ended_scanner, write_corpus_json  # noqa: E402  pylint: disable=import-error

CORPUS = os.path.join(ROOT, "tests", "data", "startup_corpus")


def hint_inputs(text: str) -> "tuple[str, str, str, str]":
    """(cause, error message, phase, evidence) as the scanner hands them to hint_for for a failed start once its exit is
    known: the scanner returns the hint, not its inputs, so this reaches into it (a development tool, not an interface)."""
    scanner = ended_scanner(text)
    _tb, cause, message, _fatal, evidence = scanner._decision or scanner._decide()  # pylint: disable=protected-access
    result = scanner.result()
    phase = result["phase"]
    if phase == "weights_loading" and scanner._weights_loaded:  # pylint: disable=protected-access
        phase = "kv_cache_allocated"  # as the scanner's result() asks for the hint
    return cause, message, phase, evidence


def main() -> int:
    with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as handle:
        rows = json.load(handle)
    best = {}
    for row in rows:
        if row["split"] == "test" or row["outcome"] != "failed start":
            continue  # the held-out split is never read here
        with open(os.path.join(CORPUS, row["file"]), "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        cause, message, phase, evidence = hint_inputs(text)
        if cause != row["cause"]:
            continue  # a log the scanner still reads wrong says nothing about its label's hint
        hint = hint_for(cause, message, phase, evidence)
        case = {"file": row["file"], "cause": cause, "message": message, "phase": phase, "evidence": evidence, "hint": hint}
        size = len(message or "") + len(evidence or "")
        if hint not in best or size < best[hint][0]:
            best[hint] = (size, case)
    cases = sorted((case for _size, case in best.values()), key=lambda case: case["file"])
    write_corpus_json("hint_cases.json", cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
