# -*- coding: utf-8 -*-
"""flags.server_config word for word: the header, the key order and quoting, each list shape, and the
message of each refusal, named by its key (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import hashlib

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import (
    ConfigRenderError,
    config_sha256,
    render_server_config,
)

HEADER_TEXT = ("# SGLang launch flags (sglang serve --config), rendered by gpufleet.sglang from sglang_server_args.\n"
               "# Do not edit: the next deploy overwrites it.\n")


def test_the_file_starts_with_its_header():
    assert render_server_config({"tp-size": 2}) == HEADER_TEXT + "tp-size: 2\n"
    assert render_server_config({}) == HEADER_TEXT + "{}\n"


def test_keys_sorted_as_text_and_quoted_when_yaml_would_read_them_otherwise():
    config = {"no": 1, "B": "x", "a": ("p", "q"), "e": []}
    assert render_server_config(config, header=False) == "B: x\na:\n  - p\n  - q\ne: []\n'no': 1\n"


def error_of(config):
    with pytest.raises(ConfigRenderError) as caught:
        render_server_config(config)
    return str(caught.value)


@pytest.mark.parametrize("config, message", [
    (["a"], "the config is a mapping of option names to values, not list"),
    ("a: 1", "the config is a mapping of option names to values, not str"),
    ({"a b": 1}, "'a b' is not an option name"),
    ({1: 1}, "1 is not an option name"),
    ({"k": [[1]]}, "k: list items must be plain values, not a list"),
    ({"k": [(1,)]}, "k: list items must be plain values, not a tuple"),
    ({"k": [{"a": 1}]}, "k: list items must be plain values, not a dict"),
    ({"k": {"a": 1}}, "k: a mapping is not a plain value (JSON options take a JSON string)"),
    ({"k": [1, None]}, "k: null cannot be written: SGLang's loader would pass the text 'None'"),
    ({"k": None}, "k: null cannot be written: SGLang's loader would pass the text 'None'"),
    ({"k": float("nan")}, "k: nan is not a finite number"),
    ({"k": ["a\nb"]}, "k: a string holds the control character '\\n'; values must be one line of printable text"),
])
def test_each_refusal_names_its_key(config, message):
    assert error_of(config) == message


def test_the_refusal_of_a_value_does_not_chain_the_inner_error():
    with pytest.raises(ConfigRenderError) as caught:
        render_server_config({"k": None})
    assert caught.value.__suppress_context__ is True
    with pytest.raises(ConfigRenderError) as caught:
        render_server_config({"k": [None]})
    assert caught.value.__suppress_context__ is True


def test_a_bad_key_is_found_before_a_later_good_one_is_rendered():
    assert error_of({"a": 1, "b c": 2}) == "'b c' is not an option name"


def test_the_digest_is_sha256_of_the_utf8_text():
    assert config_sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert config_sha256("a") == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    assert config_sha256("\u00e9") == hashlib.sha256(b"\xc3\xa9").hexdigest()  # UTF-8, not Latin-1
