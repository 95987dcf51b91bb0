# -*- coding: utf-8 -*-
"""probe.prompts at its edges: each shipped prompt reads as a request (a capitalised first word, a closing
full stop or question mark), the interleaving of any choice of lengths, and each user-file format, key and
error word for word (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import json
import re

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.prompts import (
    LONG,
    MEDIUM,
    SHORT,
    parse_prompts,
    shipped_prompts,
)


@pytest.mark.parametrize("prompt", list(SHORT) + list(MEDIUM) + list(LONG), ids=lambda p: p[:40])
def test_each_shipped_prompt_reads_as_one_request(prompt):
    assert re.match(r"^(I|[A-Z][a-z]+)\b", prompt), prompt[:40]
    assert prompt.rstrip()[-1] in ".?", prompt[-40:]
    assert prompt == prompt.strip()


def test_six_short_five_medium_and_four_long_prompts():
    assert (len(SHORT), len(MEDIUM), len(LONG)) == (6, 5, 4)


def test_two_lengths_interleave_in_the_shipped_order_whatever_order_is_asked():
    expected = [SHORT[0], LONG[0], SHORT[1], LONG[1], SHORT[2], LONG[2], SHORT[3], LONG[3], SHORT[4], SHORT[5]]
    assert shipped_prompts(["long", "short"]) == expected
    assert shipped_prompts(("short", "long")) == expected


def test_all_three_lengths_interleave_until_each_runs_out():
    every = shipped_prompts()
    assert every[:6] == [SHORT[0], MEDIUM[0], LONG[0], SHORT[1], MEDIUM[1], LONG[1]]
    assert every[12:] == [SHORT[4], MEDIUM[4], SHORT[5]]
    assert shipped_prompts(["medium"]) == list(MEDIUM)


@pytest.mark.parametrize("lengths, message", [
    (["huge"], "prompt lengths must be among short, medium, long (got huge)"),
    (["short", "tiny"], "prompt lengths must be among short, medium, long (got short, tiny)"),
    ([], "prompt lengths must be among short, medium, long (got none)"),
])
def test_unknown_lengths_word_for_word(lengths, message):
    with pytest.raises(ValueError) as caught:
        shipped_prompts(lengths)
    assert str(caught.value) == message


def test_json_items_by_each_key_in_order_of_preference():
    items = [{"content": "c"}, {"text": "t", "content": "c"}, {"prompt": "p", "text": "t"}, {"prompt": 3, "text": "t2"}]
    assert parse_prompts(json.dumps(items)) == ["c", "t", "p", "t2"]


@pytest.mark.parametrize("item", [3, None, ["a"], {"prompt": 3}, {"messages": "m"}])
def test_a_json_item_without_a_prompt_string_is_refused_word_for_word(item):
    with pytest.raises(ValueError) as caught:
        parse_prompts(json.dumps([item]))
    assert str(caught.value) == "a prompt must be a string or an object with a 'prompt' string, got %r" % (item,)


def test_json_lines_of_strings_and_objects():
    assert parse_prompts('"first"\n{"text": "second"}\n   \n"third"') == ["first", "second", "third"]
    assert parse_prompts('  {"prompt": "indented file"}\n') == ["indented file"]


def test_blank_prompts_of_any_format_are_dropped():
    assert parse_prompts(json.dumps(["a", "  ", ""])) == ["a"]
    assert parse_prompts("a\n---\n   \n---\nb") == ["a", "b"]


def test_plain_text_splits_only_on_lines_holding_only_three_dashes():
    text = "one\n  ---  \ntwo\n----\nstill two\n--- x\nstill two\n---\n  three  "
    assert parse_prompts(text) == ["one", "two\n----\nstill two\n--- x\nstill two", "three"]


@pytest.mark.parametrize("text, message", [
    ("", "the prompts file is empty"), ("  \n\t\n", "the prompts file is empty"),
    ("[]", "the prompts file holds no prompt"), ('[" "]', "the prompts file holds no prompt"),
    ("---\n---", "the prompts file holds no prompt"),
])
def test_empty_files_word_for_word(text, message):
    with pytest.raises(ValueError) as caught:
        parse_prompts(text)
    assert str(caught.value) == message


def test_a_plain_text_file_may_start_with_any_letter():
    assert parse_prompts("Xcode fails to build\nthe target") == ["Xcode fails to build\nthe target"]
    assert parse_prompts("a\n---\nb\nc") == ["a", "b\nc"]
