# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every cause rule on real words, fast: the line of each developed failed start that decided its cause, read alone,
gives the log's label (corpus.json), and is a verbatim part of its log.

The lines come from tools/dev/deciding_lines.py (the line the scanner's verdict rests on, for the logs it reads right,
where that line alone is enough); the labels do not: they are the corpus's. This is the corpus test's promise for the
rules alone, in well under a second, so that mutation testing of startup/causes can run it for every mutant of the
rule table. Logs that need more than one line stay checked by test_startup_corpus.py.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import decisive

CORPUS = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "tests", "data", "startup_corpus")

with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as _handle:
    LABELS = {row["file"]: row for row in json.load(_handle)}
with open(os.path.join(CORPUS, "deciding_lines.json"), encoding="utf-8") as _handle:
    DECIDING = json.load(_handle)


def test_the_deciding_lines_are_many_and_of_developed_failed_starts():
    assert len(DECIDING) >= 300
    assert len({entry["file"] for entry in DECIDING}) == len(DECIDING)
    for entry in DECIDING:
        row = LABELS[entry["file"]]
        assert (row["outcome"], row["split"] != "test") == ("failed start", True), entry["file"][:3]


@pytest.mark.parametrize("entry", DECIDING, ids=[entry["file"][:3] for entry in DECIDING])
def test_a_log_s_deciding_line_alone_gives_its_label(entry):
    with open(os.path.join(CORPUS, entry["file"]), "rb") as handle:
        assert entry["line"] in handle.read().decode("utf-8", "replace")
    assert decisive(entry["line"])[0] == LABELS[entry["file"]]["cause"]
