# -*- coding: utf-8 -*-
"""probe_prompts: the shipped coding prompts have the lengths they claim; user files in three formats."""

from __future__ import annotations

import json
import re

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.prompts import (
    LONG,
    MEDIUM,
    SHORT,
    load_prompts_file,
    parse_prompts,
    shipped_prompts,
)

# A rough BPE token count: words, numbers and single punctuation characters (code-heavy text tokenises
# close to this; a real tokenizer is not available to a standard-library module).
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def approx_tokens(text):
    return len(_TOKEN_RE.findall(text))


@pytest.mark.parametrize("group,low,high", [(SHORT, 20, 80), (MEDIUM, 120, 350), (LONG, 500, 1300)])
def test_each_length_class_is_in_its_range(group, low, high):
    assert len(group) >= 4
    for prompt in group:
        assert low <= approx_tokens(prompt) <= high, (approx_tokens(prompt), prompt[:60])


def test_prompts_are_distinct_and_interleaved_by_length():
    every = shipped_prompts()
    assert len(every) == len(SHORT) + len(MEDIUM) + len(LONG) == len(set(every))
    assert every[:3] == [SHORT[0], MEDIUM[0], LONG[0]]
    assert shipped_prompts(["long"]) == list(LONG)
    with pytest.raises(ValueError, match="prompt lengths"):
        shipped_prompts(["huge"])


def test_user_files_json_jsonl_and_text(tmp_path):
    assert parse_prompts(json.dumps(["a", {"prompt": "b"}, {"text": "c"}])) == ["a", "b", "c"]
    assert parse_prompts('{"prompt": "x"}\n\n"y"\n') == ["x", "y"]
    assert parse_prompts("first line\nsecond\n---\nthird\n---\n") == ["first line\nsecond", "third"]
    path = tmp_path / "p.txt"
    path.write_text("only one prompt", encoding="utf-8")
    assert load_prompts_file(str(path)) == ["only one prompt"]
    for bad in ("", "[]", json.dumps([{"messages": []}])):
        with pytest.raises(ValueError):
            parse_prompts(bad)
