# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every hint the developed failed starts of the corpus get, word for word, from the inputs the scanner hands to hint_for.

The cases come from tools/dev/hint_cases.py (for each distinct hint, the shortest real failed start that gets it: its
cause, error message, phase and evidence); the file is reviewed like code, so a hint that changes shows as a diff. Why
word for word: a hint is what the operator acts on, assembled from many literal pieces and branches, and a check of its
first words leaves the rest free to go wrong (mutation testing of startup/causes showed most of them unchecked).
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import hint_for

CORPUS = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "tests", "data", "startup_corpus")

with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as _handle:
    LABELS = {row["file"]: row for row in json.load(_handle)}
with open(os.path.join(CORPUS, "hint_cases.json"), encoding="utf-8") as _handle:
    CASES = json.load(_handle)


def test_the_cases_are_developed_failed_starts_with_their_label_and_one_per_hint():
    assert len(CASES) >= 150
    assert len({case["hint"] for case in CASES}) == len(CASES)
    for case in CASES:
        row = LABELS[case["file"]]
        assert (row["outcome"], row["split"] != "test", row["cause"]) == ("failed start", True, case["cause"]), case["file"][:3]


@pytest.mark.parametrize("case", CASES, ids=[case["file"][:3] for case in CASES])
def test_a_real_failed_start_gets_its_hint_word_for_word(case):
    assert hint_for(case["cause"], case["message"], case["phase"], case["evidence"]) == case["hint"]
