# -*- coding: utf-8 -*-
"""flags.findings on its own: the finding schema, the order, the counts, how a value is shown, and the
"did you mean" policy at each of its cut-offs (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import (
    _edit_distance,
    close_matches,
    count_findings,
    display,
    finding,
    sort_findings,
)


def test_a_finding_has_every_key():
    assert finding("warning", "deprecated", "tp", "msg", "hint", "preflight") == {
        "severity": "warning", "code": "deprecated", "flag": "tp", "message": "msg", "hint": "hint", "source": "preflight"}
    assert finding("info", "c", None, "m") == {"severity": "info", "code": "c", "flag": "", "message": "m", "hint": "",
                                               "source": "lint"}
    assert finding("error", "c", "", "m")["severity"] == "error"


def test_an_unknown_severity_is_refused_word_for_word():
    with pytest.raises(ValueError) as caught:
        finding("fatal", "c", None, "m")
    assert str(caught.value) == "severity must be one of error, warning, info, not 'fatal'"


def test_findings_sort_by_severity_then_source_flag_code_and_message():
    items = [
        {"severity": "info", "source": "lint", "flag": "a", "code": "c", "message": "m"},
        {"severity": "other", "source": "a", "flag": "a", "code": "c", "message": "m"},
        {"severity": "warning", "source": "lint", "flag": "b", "code": "c", "message": "m"},
        {"severity": "error", "source": "preflight", "flag": "a", "code": "c", "message": "m"},
        {"severity": "error", "source": "lint", "flag": "b", "code": "c", "message": "m"},
        {"severity": "error", "source": "lint", "flag": "a", "code": "d", "message": "m"},
        {"severity": "error", "source": "lint", "flag": "a", "code": "c", "message": "n"},
        {"severity": "error", "source": "lint", "flag": "a", "code": "c", "message": "m"},
        {"severity": "warning", "flag": "a"},
    ]
    order = [items[i] for i in (7, 6, 5, 4, 3, 8, 2, 0, 1)]
    assert sort_findings(items) == order


def test_counts_per_severity_ignore_others():
    items = [{"severity": "error"}, {"severity": "error"}, {"severity": "info"}, {"severity": "fatal"}, {}]
    assert count_findings(items) == {"error": 2, "warning": 0, "info": 1}
    assert count_findings([]) == {"error": 0, "warning": 0, "info": 0}


@pytest.mark.parametrize("value, text", [
    ("abc", "'abc'"), (3, "3"), (True, "True"), (None, "None"), ([1, 2], "[1, 2]"),
    ("x" * 58, repr("x" * 58)), ("x" * 59, "'" + "x" * 56 + "..."),
])
def test_values_are_shown_as_repr_cut_at_60_characters(value, text):
    assert display(value) == text
    assert len(display("y" * 200)) == 60


def test_the_cut_follows_the_limit_given():
    assert display("abcdefghij", limit=8) == "'abcd..."
    assert display("abcdef", limit=8) == "'abcdef'"


def test_a_secret_value_is_masked_and_a_secret_in_a_value_redacted():
    masked = display("hf_abcdefghijklmnopqrstuvwxyz0123456789", secret=True)
    assert "abcdef" not in masked and masked.startswith("'") and masked.endswith("'")
    assert "abcdefghijklmnop" not in display("token hf_abcdefghijklmnopqrstuvwxyz0123456789")


def test_a_huge_integer_is_described_not_printed():
    assert display(10 ** 400) == "<an integer of about 400 digits>"
    assert display(2 ** 999) == repr(2 ** 999)[:57] + "..."  # 1000 bits: still printed, then cut
    assert display(2 ** 1000) == "<an integer of about 301 digits>"  # 1001 bits


@pytest.mark.parametrize("word, candidates, matches", [
    ("TP-Size", ["tp_size", "tp-size", "dp_size"], ["tp_size", "tp-size"]),
    ("tp_size", ["TP_SIZE"], ["TP_SIZE"]),
    ("tpsize", ["tp_size"], ["tp_size"]),                     # one edit, six characters
    ("port", ["ports", "part", "pork"], ["part", "pork"]),     # five characters: one edit, the closest two
    ("prot", ["port"], ["port"]),                              # a transposition is one edit
    ("pt", ["port"], []),                                      # two edits on a short name: too far
    ("mem_fraction", ["mem_fraction_static"], []),             # seven characters missing
    ("mem_fractin_stati", ["mem_fraction_static"], ["mem_fraction_static"]),  # two edits on a long name
    ("mem_fracti_stati", ["mem_fraction_static"], []),         # three
    ("lgo_level", ["log_level", "log_levels", "lgo_levels"], ["lgo_levels", "log_level"]),
    ("model", ["mode", "models", "modal", "mdoel"], ["mdoel", "modal"]),  # all one edit: in name order
    ("abcdef", ["abcdxy", "abcdez"], ["abcdez"]),              # the closest only, not a worse guess beside it
    ("abc", [], []),
])
def test_close_matches_policy(word, candidates, matches):
    assert close_matches(word, candidates) == matches


def test_close_matches_limit():
    assert close_matches("port", ["pork", "part", "pert"], limit=3) == ["part", "pert", "pork"]
    assert close_matches("port", ["PORT", "Port", "port"], limit=1) == ["PORT"]
    assert close_matches("mode", ["mod", "mod"]) == ["mod", "mod"]


def test_length_gap_is_checked_against_the_allowed_edits():
    assert close_matches("abcdefgh", ["abcdefghij"]) == ["abcdefghij"]   # two longer: two edits
    assert close_matches("abcdefgh", ["abcdefghijk"]) == []
    assert close_matches("abcde", ["abcdef"]) == ["abcdef"]
    assert close_matches("abcde", ["abcdefg"]) == []


def test_a_missing_sort_key_sorts_as_empty_text():
    for key in ("source", "flag", "code", "message"):
        full = {"severity": "error", "source": "A", "flag": "A", "code": "A", "message": "A"}
        missing = {k: v for k, v in full.items() if k != key}
        assert sort_findings([full, missing]) == [missing, full], key


@pytest.mark.parametrize("left, right, distance", [
    ("ab", "ba", 1), ("oprt", "port", 1), ("abc", "acb", 1), ("ca", "abc", 3), ("kitten", "sitting", 3),
    ("", "ab", 2), ("ab", "", 2), ("", "", 0), ("same", "same", 0), ("aaa", "a", 2), ("aaaa", "a", 3),
])
def test_edit_distances_with_adjacent_transpositions(left, right, distance):
    assert _edit_distance(left, right) == distance


def test_a_transposition_at_the_start_is_one_edit():
    assert close_matches("oprt", ["port"]) == ["port"]


def test_six_characters_allow_two_edits():
    assert close_matches("abcdef", ["abcdxy"]) == ["abcdxy"]
    assert close_matches("abcde", ["abcxy"]) == []


def test_dashes_in_candidates_count_as_underscores_for_the_distance():
    assert close_matches("ab_c", ["ab-cd"]) == ["ab-cd"]
    assert close_matches("ab-c", ["ab_cd"]) == ["ab_cd"]
