# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for the target-side YAML scalar writer: exact text for each kind of value, and PyYAML reads it back."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.gpufleet.sglang.plugins.module_utils.yaml_text import (
    CONTROL_CHARS_RE, OPTION_KEY_RE, ScalarError, yaml_scalar, yaml_string)


@pytest.mark.parametrize("text, expected", [
    # Plain: letters, '_' or '/' first, then letters, digits and _ . / + -
    ("abc", "abc"), ("_x", "_x"), ("/models/qwen", "/models/qwen"), ("Qwen/Qwen2.5-7B+fp8_v1", "Qwen/Qwen2.5-7B+fp8_v1"),
    ("Z9", "Z9"),
    # Single-quoted: what a resolver could misread, or what holds an indicator or a space.
    ("1abc", "'1abc'"), ("30000", "'30000'"), ("-x", "'-x'"), (".x", "'.x'"), ("+x", "'+x'"), ("a b", "'a b'"),
    ("a:b", "'a:b'"), ("a#b", "'a#b'"), ("a,b", "'a,b'"), ("x*", "'x*'"), ("", "''"), ("it's", "'it''s'"),
    ("~", "'~'"), ("<<", "'<<'"),
    # Double-quoted with escapes: non-ASCII, so the file is pure ASCII; '"' and '\' escaped there only.
    ("caf\u00e9", '"caf\\u00e9"'), ("\u00a0", '"\\u00a0"'), ("\ufffd \"q\" \\", '"\\ufffd \\"q\\" \\\\"'),
    ("\U00010000", '"\\U00010000"'), ("\U0001f600x", '"\\U0001f600x"'), ("it's \u00e9", '"it\'s \\u00e9"'),
])
def test_yaml_string_exact_text(text, expected):
    """Each string gets one fixed spelling, and PyYAML reads that spelling back as the same string."""
    assert yaml_string(text) == expected
    assert yaml.safe_load("v: " + expected)["v"] == text


@pytest.mark.parametrize("word", ["y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf",
                                  "Y", "Yes", "NO", "True", "OFF", "Null", "NaN", "INF"])
def test_reserved_words_are_quoted_in_any_case(word):
    """Every YAML 1.1 bool/null/float word is quoted whatever its case, so it stays a string."""
    assert yaml_string(word) == "'%s'" % word
    assert yaml.safe_load("v: '%s'" % word)["v"] == word


def test_words_near_reserved_ones_stay_plain():
    """Only the words themselves are quoted: 'yesterday', 'none', 'info' are plain."""
    assert [yaml_string(w) for w in ("yesterday", "none", "info", "nano", "offset")] == \
        ["yesterday", "none", "info", "nano", "offset"]


@pytest.mark.parametrize("char", ["\x00", "\t", "\n", "\x1f", "\x7f", "\x80", "\x9f", "\u2028", "\u2029",
                                  "\ud800", "\udfff", "\ufeff", "\ufffe", "\uffff"])
def test_control_characters_are_refused(char):
    """Each end of each refused range raises, naming the character."""
    with pytest.raises(ScalarError) as err:
        yaml_string("a" + char + "b")
    assert str(err.value) == ("a string holds the control character %r; values must be one line of printable text"
                              % char)
    assert CONTROL_CHARS_RE.search(char).group() == char


@pytest.mark.parametrize("char", [" ", "~", "\xa0", "\u2027", "\u202a", "\ud7ff", "\ue000", "\ufefe", "\ufffd"])
def test_characters_just_outside_the_refused_ranges_pass(char):
    """Neighbours of the refused ranges are ordinary text."""
    assert CONTROL_CHARS_RE.search(char) is None
    assert yaml.safe_load("v: " + yaml_string(char))["v"] == char


@pytest.mark.parametrize("key, ok", [("tp-size", True), ("tp_size", True), ("0x", True), ("A", True),
                                     ("-tp", False), ("_tp", False), ("tp size", False), ("tp.size", False),
                                     ("", False)])
def test_option_key_pattern(key, ok):
    """Option keys: a letter or digit, then letters, digits, '_' and '-', nothing else."""
    assert bool(OPTION_KEY_RE.match(key)) is ok


@pytest.mark.parametrize("value, expected", [
    (True, "true"), (False, "false"), (0, "0"), (1, "1"), (-3, "-3"), (30000, "30000"),
    (1.5, "1.5"), (1.0, "1.0"), (-0.0, "-0.0"), (0.85, "0.85"), (1e-05, "1.0e-05"), (1.5e-07, "1.5e-07"),
    (1e16, "1.0e+16"), (2.5e+20, "2.5e+20"), (-1e-10, "-1.0e-10"),
    ("abc", "abc"), ("on", "'on'"),
])
def test_yaml_scalar_exact_text(value, expected):
    """bool, int, float and str each get one spelling that safe_load reads back as the same type and value."""
    assert yaml_scalar(value) == expected
    back = yaml.safe_load("v: " + expected)["v"]
    assert (type(back), back) == (type(value), value)


@pytest.mark.parametrize("value, message", [
    (float("inf"), "inf is not a finite number"),
    (float("-inf"), "-inf is not a finite number"),
    (float("nan"), "nan is not a finite number"),
    (None, "null cannot be written: SGLang's loader would pass the text 'None'"),
    ([1], "a list is not a plain scalar"),
    ({"a": 1}, "a dict is not a plain scalar"),
    (b"x", "a bytes is not a plain scalar"),
    (10 ** 5000, "an integer of 16610 bits is too large to write"),
], ids=["inf", "-inf", "nan", "None", "list", "dict", "bytes", "10**5000"])
def test_values_no_scalar_carries_are_refused(value, message):
    """Non-finite floats, null, containers and integers too long to print raise with a clear message."""
    with pytest.raises(ScalarError) as err:
        yaml_scalar(value)
    assert str(err.value) == message


def test_scalar_error_is_a_value_error():
    """Callers that catch ValueError (the flag lint) catch it."""
    assert issubclass(ScalarError, ValueError)
