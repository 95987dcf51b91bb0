# -*- coding: utf-8 -*-
"""flags.values: the promises the first mutation run (make mutation MODULES=flags/values) found untested: the
checker's defaults (not secret, messages name sglang_server_args), the 64-bit cut-off for an integer given to a
text option, a JSON option found by its dest, and the hint for a YAML boolean given to a JSON option (which said
"give it a number, e.g. 1" before: a bug)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import FlagTable
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.values import DROP, ValueChecker

TEXT = {"opts": ["--served-model-name"], "dest": "served_model_name", "action": "_StoreAction", "type": "str"}
LOADS = {"opts": ["--loads"], "dest": "loads", "action": "_StoreAction", "type": "loads"}
JLIST = {"opts": ["--jlist"], "dest": "jlist", "action": "_StoreAction", "type": "json_list_type"}
GRAPH = {"opts": ["--graph"], "dest": "graph", "action": "_StoreAction", "type": "parse_cuda_graph_config_arg"}
# A text option whose value SGLang parses as JSON, reached under another key than its dest (an alias).
EXTRA = {"opts": ["--model-loader-extra-config", "--extra"], "dest": "model_loader_extra_config",
         "action": "_StoreAction", "type": "str"}

MAPPING_HINT = ("Give sglang_server_args.%s a YAML mapping (the collection writes it as JSON), or a JSON object as a"
                " string such as '{\"key\": 1}'.")


def run(action, value, name=None, **kwargs):
    """A checker built with only the required arguments (its defaults under test) plus ``kwargs``."""
    table = FlagTable({"sglang_version": "0.5.23", "actions": [action]})
    findings = []
    out = ValueChecker(table, action, name or action["dest"], findings, **kwargs).check(value)
    return out, [(f["severity"], f["code"], f["message"], f["hint"]) for f in findings]


def test_by_default_a_value_is_not_secret_and_is_shown():
    out, findings = run(TEXT, "-plain")
    assert out is DROP
    assert findings[0][2].startswith("served_model_name: the value '-plain' starts with '-'")


def test_by_default_hints_name_the_sglang_server_args_variable():
    assert run(TEXT, "-x")[1][0][3] == "Remove the leading '-' from sglang_server_args.served_model_name."


@pytest.mark.parametrize("value", [2 ** 64, -(2 ** 64), 2 ** 65])
def test_an_integer_of_more_than_64_bits_is_out_of_range_even_for_text(value):
    assert run(TEXT, value) == (DROP, [("error", "value_out_of_range", "argument --served-model-name: %d does not fit a"
                                        " 64-bit integer" % value, "Check where the number comes from.")])


@pytest.mark.parametrize("value", [2 ** 64 - 1, 2 ** 63])
def test_an_integer_of_64_bits_for_text_is_sent_as_its_text(value):
    assert run(TEXT, value) == (str(value), [(
        "warning", "number_for_string",
        "served_model_name takes text; YAML gave the number %d, which SGLang receives as '%d'" % (value, value),
        "Quote the value in YAML if you meant other text (an unquoted 012 is the number 10, 1e3 may be a float).")])


def test_a_list_for_a_json_option_found_by_its_dest_is_a_json_error_not_a_list_error():
    # The key is the alias 'extra' (not a JSON option's name): the dest makes it a JSON option, which wants an object.
    assert run(EXTRA, [1, 2], name="extra") == (DROP, [(
        "error", "invalid_type", "argument --model-loader-extra-config/--extra: invalid JSON value: '[1, 2]'",
        MAPPING_HINT % "extra")])
    assert run(EXTRA, {"b": 1}, name="extra") == ('{"b":1}', [])


def test_a_list_for_a_text_option_that_is_not_json_is_a_list_error():
    assert run(TEXT, ["a", "b"])[1][0][1] == "list_for_scalar"


@pytest.mark.parametrize("action, value, message, hint", [
    (LOADS, True, "argument --loads: invalid loads value: 'True'",
     "Give sglang_server_args.loads a YAML mapping or list, or valid JSON as a string."),
    (JLIST, False, "argument --jlist: invalid json_list_type value: 'False'",
     "Give sglang_server_args.jlist a YAML list, or a JSON list as a string such as '[\"a\", \"b\"]'."),
    (GRAPH, True, "argument --graph: invalid parse_cuda_graph_config_arg value: 'True'", MAPPING_HINT % "graph"),
    (EXTRA, True, "argument --model-loader-extra-config/--extra: invalid JSON value: 'True'",
     MAPPING_HINT % "model_loader_extra_config"),
])
def test_a_yaml_boolean_for_a_json_option_gets_the_json_hint_not_a_number(action, value, message, hint):
    assert run(action, value) == (DROP, [("error", "invalid_type", message, hint)])


def test_a_yaml_boolean_for_a_nullable_text_option_says_to_quote_it():
    action = dict(TEXT, type="nullable_str")
    assert run(action, True)[1] == [(
        "error", "invalid_type", "argument --served-model-name: invalid str value: 'True'",
        "YAML read an unquoted yes/no/on/off/true/false as a boolean; quote it: sglang_server_args.served_model_name:"
        " 'true'.")]
