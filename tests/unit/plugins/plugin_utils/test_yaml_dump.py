# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/yaml_dump: one-line flow YAML and the pasteable sglang_server_args block, exact text."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.gpufleet.sglang.plugins.plugin_utils import yaml_dump


class TaggedStr(str):
    """Stands for ansible-core's tagged strings, which PyYAML's safe dumper refuses."""


@pytest.mark.parametrize("value, text", [
    (True, "true"), (0.99, "0.99"), (30000, "30000"), (None, "null"), ("fa3", "fa3"), ("on", "'on'"),
    ("", "''"), ([1, 2], "[1, 2]"), ({"b": 1, "a": [True]}, "{b: 1, a: [true]}"), ("caf\u00e9", '"caf\\xE9"'),
    ("two\nlines", '"two\\nlines"'), (TaggedStr("x"), "x"), ((1, "a"), "[1, a]"),
])
def test_flow_yaml_exact_one_line(value, text):
    """One line, order kept, ASCII only, line breaks escaped; it reads back as the same (plain) value."""
    out = yaml_dump.flow_yaml(value)
    assert out == text
    assert "\n" not in out
    assert yaml.safe_load(out) == yaml_dump.plain(value)


def test_long_values_stay_on_one_line():
    """No folding at PyYAML's default width of 80."""
    value = ["x" * 50, "y" * 50, "z" * 50]
    assert yaml_dump.flow_yaml(value) == "[%s, %s, %s]" % ("x" * 50, "y" * 50, "z" * 50)
    assert yaml_dump.flow_yaml("w " * 60) == "'%s'" % ("w " * 60)


def test_plain_turns_subclasses_into_json_types():
    """Tagged subclasses become plain str/dict/list; tuples become lists."""
    out = yaml_dump.plain({TaggedStr("k"): (TaggedStr("v"), 1.5)})
    assert out == {"k": ["v", 1.5]}
    assert next(iter(out)).__class__ is str


def test_args_yaml_exact_block():
    """The inventory block: the key, then one indented option a line, in the given order."""
    args = {"tp_size": 2, "attention_backend": "fa3", "enable_torch_compile": True, "mem_fraction_static": 0.85,
            "cuda_graph_bs": [1, 2], "chat_template": TaggedStr("caf\u00e9")}
    assert yaml_dump.args_yaml(args) == (
        "sglang_server_args:\n"
        "  tp_size: 2\n"
        "  attention_backend: fa3\n"
        "  enable_torch_compile: true\n"
        "  mem_fraction_static: 0.85\n"
        "  cuda_graph_bs:\n"
        "  - 1\n"
        "  - 2\n"
        "  chat_template: \"caf\\xE9\"\n")
    assert yaml_dump.SERVER_ARGS_KEY == "sglang_server_args"
    assert yaml_dump.args_yaml({"x": 1}, key="other") == "other:\n  x: 1\n"
    assert yaml_dump.args_yaml({"long": "v" * 120}) == "sglang_server_args:\n  long: %s\n" % ("v" * 120)
    words = "w " * 60 + "end"
    assert yaml_dump.args_yaml({"words": words}) == "sglang_server_args:\n  words: %s\n" % words  # not folded at 80
