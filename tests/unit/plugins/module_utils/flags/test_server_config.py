# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The --config renderer: deterministic bytes, and PyYAML (what SGLang reads it with) gets every value back."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import (
    HEADER,
    ConfigRenderError,
    config_sha256,
    render_server_config,
    yaml_scalar,
)

ROOT = Path(__file__).resolve().parents[5]
TABLE_0523 = json.loads((ROOT / "data" / "sglang_flags" / "0.5.23.json").read_text(encoding="utf-8"))

NASTY_STRINGS = [
    "no", "No", "NO", "yes", "Yes", "on", "off", "On", "OFF", "y", "n", "Y", "N", "true", "False", "TRUE",
    "null", "Null", "NULL", "~", "", " ", "1e3", "1E3", "1.5e-3", "0x1F", "0o17", "012", "0b101", "1_000",
    "+1", "-1", ".5", "1.", ".inf", "-.inf", ".nan", ".NaN", "nan", "inf", "1:20", "1:20:30.5", "2001-12-14",
    "2001-12-14t21:59:43.10-05:00", ":", "a:b", "a: b", "#", "a #b", "a#b", "# comment", " leading", "trailing ",
    "  both  ", "'", "''", '"', "a'b", 'a"b', "\\", "\\n", "%", "@x", "`x", "!tag", "!!str", "&anchor", "*alias",
    "<<", "=", "?", "- x", "-", "--", "[a]", "{a: 1}", "a,b", "|", ">", "tab\tinside".replace("\t", " "),
    "é", "日本語", "emoji 😀", "\u00a0nbsp", "mixed é 'quote'", "/srv/models/Qwen3-27B", "org/model@rev",
    "http://h:30000/v1", "a=b", "NEXTN", "x" * 2000,
]


def roundtrip(config):
    text = render_server_config(config)
    assert text.isascii()
    return yaml.safe_load(text), text


@pytest.mark.parametrize("text", NASTY_STRINGS)
def test_every_nasty_string_reads_back_as_itself(text):
    loaded, dummy = roundtrip({"served-model-name": text})
    assert loaded == {"served-model-name": text}
    assert isinstance(loaded["served-model-name"], str)


@pytest.mark.parametrize("value", [True, False, 0, 1, -1, 2 ** 63 - 1, -(2 ** 63), 10 ** 40, 0.0, -0.0, 0.85, 1.0,
                                   1e-05, 1.5e-07, 1e20, -2.5e+30, 123456789.125, 5e-324, 1.7976931348623157e308])
def test_numbers_and_booleans_read_back_with_their_type(value):
    loaded, dummy = roundtrip({"k": value})
    assert loaded["k"] == value and loaded["k"].__class__ is value.__class__


def test_lists_read_back():
    config = {"cuda-graph-bs-decode": [1, 2, 4, 8], "encoder-urls": ["http://a:1", "no", "~", "é"], "empty": []}
    loaded, text = roundtrip(config)
    assert loaded == config
    assert "cuda-graph-bs-decode:\n  - 1\n  - 2\n" in text


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b", "\x07", "a\x85b", "a\u2028b", "\ud800", "\ufeffx",
                                   float("nan"), float("inf"), None, {"a": 1}, [[1]], [None], object()])
def test_values_that_cannot_be_carried_are_refused(value):
    with pytest.raises(ConfigRenderError):
        render_server_config({"k": value})


def test_an_integer_too_large_to_print_is_refused():
    with pytest.raises(ConfigRenderError):
        render_server_config({"k": 10 ** 5000})


@pytest.mark.parametrize("key", ["", "a b", "a:b", 1, None, "-x", "é"])
def test_keys_must_be_option_names(key):
    with pytest.raises(ConfigRenderError):
        render_server_config({key: 1})


def test_not_a_mapping():
    with pytest.raises(ConfigRenderError):
        render_server_config(["a"])


def test_output_is_deterministic_and_sorted():
    first = render_server_config({"tp-size": 2, "model-path": "/m", "api-key": "k"})
    second = render_server_config({"api-key": "k", "model-path": "/m", "tp-size": 2})
    assert first == second
    assert first == HEADER + "api-key: k\nmodel-path: /m\ntp-size: 2\n"
    assert config_sha256(first) == config_sha256(second)


def test_empty_config_is_an_empty_mapping():
    assert yaml.safe_load(render_server_config({})) == {}
    assert render_server_config({}, header=False) == "{}\n"


def test_scalar_spellings():
    assert yaml_scalar(True) == "true"
    assert yaml_scalar(1e-05) == "1.0e-05"
    assert yaml_scalar(1e20) == "1.0e+20"
    assert yaml_scalar(100.0) == "100.0"
    assert yaml_scalar("no") == "'no'"
    assert yaml_scalar("it's") == "'it''s'"
    assert yaml_scalar("é") == '"\\u00e9"'
    assert yaml_scalar("😀") == '"\\U0001f600"'
    assert yaml_scalar("/srv/models/x") == "/srv/models/x"


def test_random_strings_round_trip():
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0x20, 0x7F)] + ["é", "ß", "中", "😀", "\u00a0", "\u3000", "\ue000"]
    for dummy in range(2000):
        text = "".join(rng.choice(alphabet) for dummy in range(rng.randint(0, 12)))
        loaded, dummy = roundtrip({"k": text, "l": [text, text + "x"]})
        assert loaded == {"k": text, "l": [text, text + "x"]}, repr(text)


def test_a_linted_config_always_renders_and_reads_back():
    """Whatever the operator wrote, what the lint keeps renders, and PyYAML reads back the same values."""
    args = {"model_path": "/srv/models/m", "served_model_name": "no", "chat_template": "~", "revision": "012",
            "tokenizer_path": "1e3", "api_key": "hash#tag: 'quoted'", "host": "::", "tp_size": "2",
            "mem_fraction_static": "0.85", "cuda_graph_bs_decode": [1, "2", 4], "language_only": True,
            "preferred_sampling_params": {"temperature": 0.6, "stop": ["\n\n"]}, "context_length": "32k",
            "encoder_urls": ["http://enc:1", "http://enc:2"]}
    result = sf.lint_server_args(args, TABLE_0523, "0.5.23")
    assert result.errors == []
    loaded = yaml.safe_load(render_server_config(result.config))
    assert loaded == result.config
    assert loaded["served-model-name"] == "no" and loaded["chat-template"] == "~"
    assert loaded["tp-size"] == 2 and loaded["mem-fraction-static"] == 0.85 and loaded["language-only"] is True
    assert json.loads(loaded["preferred-sampling-params"]) == {"stop": ["\n\n"], "temperature": 0.6}
