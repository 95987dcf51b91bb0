# -*- coding: utf-8 -*-
"""flags.values on its own: one ValueChecker per argparse action shape, each value shape an inventory can hold,
and the exact finding (severity, code, message, hint) or rendered value for each, at each limit (make mutation:
tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import FlagTable
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.values import DROP, ValueChecker

INT = {"opts": ["--tp-size", "--tp"], "dest": "tp_size", "action": "_StoreAction", "type": "int", "default": 1}
FLOAT = {"opts": ["--mem-fraction-static"], "dest": "mem_fraction_static", "action": "_StoreAction", "type": "float",
         "default": 0.9}
SIZE = {"opts": ["--swap-space"], "dest": "swap_space", "action": "_StoreAction", "type": "human_readable_int"}
FLAG = {"opts": ["--enable-metrics"], "dest": "enable_metrics", "action": "_StoreTrueAction", "default": False}
TEXT = {"opts": ["--served-model-name"], "dest": "served_model_name", "action": "_StoreAction", "type": "str"}
CHOICE = {"opts": ["--attention-backend"], "dest": "attention_backend", "action": "_StoreAction", "type": "str",
          "choices": ["fa3", "flashinfer", "triton"]}
LIST = {"opts": ["--cuda-graph-bs"], "dest": "cuda_graph_bs", "action": "_StoreAction", "type": "int", "nargs": "+"}
PAIR = {"opts": ["--pair"], "dest": "pair", "action": "_StoreAction", "type": "int", "nargs": 2}
ONE = {"opts": ["--one"], "dest": "one", "action": "_StoreAction", "type": "int", "nargs": 1}
LOADS = {"opts": ["--loads"], "dest": "loads", "action": "_StoreAction", "type": "loads"}
JLIST = {"opts": ["--jlist"], "dest": "jlist", "action": "_StoreAction", "type": "json_list_type"}
GRAPH = {"opts": ["--graph"], "dest": "graph", "action": "_StoreAction", "type": "parse_cuda_graph_config_arg"}
OVERRIDE = {"opts": ["--json-model-override-args"], "dest": "json_model_override_args", "action": "_StoreAction",
            "type": "str"}


def check(action, value, name=None, secret=False, variable="sglang_server_args"):
    table = FlagTable({"sglang_version": "0.5.23", "actions": [action]})
    findings = []
    out = ValueChecker(table, action, name or action["dest"], findings, secret, variable).check(value)
    return out, [(f["severity"], f["code"], f["message"], f["hint"]) for f in findings]


def error(code, message, hint):
    return [("error", code, message, hint)]


REF = "sglang_server_args."


# ------------------------------------------------------------------------------------------------ int

def test_an_int_is_taken_as_it_is():
    assert check(INT, 2) == (2, [])
    assert check(INT, 2 ** 63 - 1) == (2 ** 63 - 1, [])
    assert check(INT, -2 ** 63) == (-2 ** 63, [])


def test_a_numeric_string_is_read_as_the_number_with_an_info():
    assert check(INT, "4") == (4, [("info", "coerced", "tp_size: the string '4' is read as the number 4", "")])


@pytest.mark.parametrize("value", [2 ** 63, -2 ** 63 - 1, 2 ** 64, 2 ** 70])
def test_an_int_past_64_bits_is_out_of_range(value):
    assert check(INT, value) == (DROP, error("value_out_of_range", "argument --tp-size/--tp: %d does not fit a 64-bit integer"
                                             % value, "Check where the number comes from."))


def test_a_numeric_string_past_64_bits_is_out_of_range():
    out, findings = check(INT, str(2 ** 63))
    assert out is DROP and [f[1] for f in findings] == ["coerced", "value_out_of_range"]


def test_a_whole_float_for_an_int_says_the_int_to_write():
    assert check(INT, 2.0) == (DROP, error("invalid_type", "argument --tp-size/--tp: invalid int value: '2.0'",
                                           "Write %stp_size: 2." % REF))


def test_a_fraction_for_an_int_gives_an_example_from_the_default():
    hint = "Give %stp_size a whole number, e.g. %stp_size: 1." % (REF, REF)
    assert check(INT, 2.5) == (DROP, error("invalid_type", "argument --tp-size/--tp: invalid int value: '2.5'", hint))
    assert check(INT, "four") == (DROP, error("invalid_type", "argument --tp-size/--tp: invalid int value: 'four'", hint))
    assert check(INT, None) == (DROP, error("invalid_type", "argument --tp-size/--tp: invalid int value: 'None'", hint))


def test_without_an_int_default_the_example_is_2():
    action = dict(INT, default=None)
    assert check(action, "x")[1][0][3] == "Give %stp_size a whole number, e.g. %stp_size: 2." % (REF, REF)
    assert check(dict(INT, default=True), "x")[1][0][3] == "Give %stp_size a whole number, e.g. %stp_size: 2." % (REF, REF)


def test_a_yaml_boolean_for_an_int():
    assert check(INT, True) == (DROP, error(
        "invalid_type", "argument --tp-size/--tp: invalid int value: 'True'",
        "YAML read an unquoted yes/no/on/off/true/false as a boolean; give %stp_size a whole number, e.g. %stp_size: 1."
        % (REF, REF)))


def test_a_list_for_a_single_value():
    assert check(INT, [1, 2]) == (DROP, error(
        "list_for_scalar", "argument --tp-size/--tp: expected one value, got a list of 2",
        "Give %stp_size a single value; only options that take several values accept a list." % REF))
    assert check(dict(INT, nargs="?"), (3,))[0] is DROP


def test_the_reference_follows_the_variable():
    assert check(INT, "x", variable="")[1][0][3] == "Give tp_size a whole number, e.g. tp_size: 1."
    assert check(INT, "x", variable="extra")[1][0][3] == "Give extra.tp_size a whole number, e.g. extra.tp_size: 1."


# ------------------------------------------------------------------------------------------------ float

def test_floats_and_ints_for_a_float():
    assert check(FLOAT, 0.85) == (0.85, [])
    out, findings = check(FLOAT, 1)
    assert (out, type(out), findings) == (1, int, [])


def test_numeric_strings_for_a_float():
    assert check(FLOAT, "0.8") == (0.8, [("info", "coerced", "mem_fraction_static: the string '0.8' is read as the number 0.8",
                                          "")])
    out, findings = check(FLOAT, "1")
    assert (out, type(out)) == (1.0, float)
    assert findings == [("info", "coerced", "mem_fraction_static: the string '1' is read as the number 1.0", "")]


def test_text_and_other_values_for_a_float():
    hint = "Give %smem_fraction_static a number, e.g. %smem_fraction_static: 0.9." % (REF, REF)
    assert check(FLOAT, "abc") == (DROP, error("invalid_type", "argument --mem-fraction-static: invalid float value: 'abc'", hint))
    assert check(FLOAT, None) == (DROP, error("invalid_type", "argument --mem-fraction-static: invalid float value: 'None'", hint))
    no_default = "Give %smem_fraction_static a number, e.g. %smem_fraction_static: 0.85." % (REF, REF)
    assert check(dict(FLOAT, default=None), "abc")[1][0][3] == no_default
    assert check(dict(FLOAT, default=1), "abc")[1][0][3] == "Give %smem_fraction_static a number, e.g. %smem_fraction_static: 1." % (
        REF, REF)


@pytest.mark.parametrize("value, shown", [(float("inf"), "inf"), (float("-inf"), "-inf"), ("nan", "'nan'"), ("inf", "'inf'")])
def test_a_float_that_is_not_finite(value, shown):
    out, findings = check(FLOAT, value)
    assert out is DROP
    assert findings[0] == ("error", "value_not_finite", "argument --mem-fraction-static: %s is not a finite number" % shown,
                           "Give a plain number.")


def test_an_int_past_the_64_bit_range_for_a_float():
    assert check(FLOAT, 2 ** 63) == (DROP, error(
        "value_out_of_range", "argument --mem-fraction-static: 9223372036854775808 is out of range",
        "Give %smem_fraction_static a plain number such as 0.9." % REF))
    assert check(FLOAT, 2 ** 63 - 1) == (2 ** 63 - 1, [])
    assert check(FLOAT, -(2 ** 63 - 1)) == (-(2 ** 63 - 1), [])
    assert check(FLOAT, 2 ** 65)[1][0][1] == "value_out_of_range"


def test_a_yaml_boolean_for_a_float():
    assert check(FLOAT, False) == (DROP, error(
        "invalid_type", "argument --mem-fraction-static: invalid float value: 'False'",
        "YAML read an unquoted yes/no/on/off/true/false as a boolean; give %smem_fraction_static a number, e.g."
        " %smem_fraction_static: 0.9." % (REF, REF)))
    assert check(dict(FLOAT, default=None), True)[1][0][3].endswith("e.g. %smem_fraction_static: 0.85." % REF)


# ------------------------------------------------------------------------------------------------ sizes

@pytest.mark.parametrize("value, out", [("64Gi", "64Gi"), (" 2k ", "2k"), ("1.5G", "1.5G"), ("10", "10"), (64, 64)] +
                         [("1" + suffix, "1" + suffix) for suffix in ("Ki", "Mi", "Gi", "Ti", "k", "K", "m", "M", "g", "G", "t", "T")])
def test_sizes(value, out):
    assert check(SIZE, value) == (out, [])


@pytest.mark.parametrize("value", ["64GB", "1Pi", "Gi", "1.Gi", "-1G", "1 Gi x", 1.5])
def test_what_is_not_a_size(value):
    shown = repr(value) if isinstance(value, str) else repr(str(value))
    assert check(SIZE, value) == (DROP, error(
        "invalid_type", "argument --swap-space: invalid human_readable_int value: %s" % shown,
        "Give %sswap_space a whole number or a size with a suffix (k, M, G, T, Ki, Mi, Gi, Ti), e.g. %sswap_space: 64Gi."
        % (REF, REF)))


def test_a_yaml_boolean_for_a_size():
    assert check(SIZE, True)[1][0][3] == ("YAML read an unquoted yes/no/on/off/true/false as a boolean; give %sswap_space a"
                                          " number, e.g. %sswap_space: 64Gi." % (REF, REF))
    assert check(dict(SIZE, default=4), True)[1][0][3].endswith("e.g. %sswap_space: 4." % REF)
    assert check(SIZE, 2 ** 63)[1][0][1] == "value_out_of_range"


# ------------------------------------------------------------------------------------------------ on/off flags

def test_booleans_for_a_flag():
    assert check(FLAG, True) == (True, [])
    assert check(FLAG, False) == (False, [])


@pytest.mark.parametrize("word, meant", [("true", "true"), ("yes", "true"), ("on", "true"), ("1", "true"), (" On ", "true"),
                                         ("false", "false"), ("no", "false"), ("off", "false"), ("0", "false"),
                                         ("FALSE", "false")])
def test_a_yes_or_no_string_for_a_flag_says_what_argparse_will_do(word, meant):
    assert check(FLAG, word) == (DROP, error(
        "expected_bool", "enable_metrics is an on/off flag (store_true) and got the string %r: SGLang's config loader passes it"
        " as '--enable-metrics %s', and argparse fails with 'unrecognized arguments: %s'" % (word, word, word),
        "Write a YAML boolean, unquoted: %senable_metrics: %s." % (REF, meant)))


@pytest.mark.parametrize("value, shown", [(1, "1"), ("maybe", "'maybe'"), (None, "None")])
def test_anything_else_for_a_flag(value, shown):
    assert check(FLAG, value) == (DROP, error(
        "expected_bool", "enable_metrics is an on/off flag (store_true): it takes true or false, not %s" % shown,
        "Write %senable_metrics: true to turn it on; leave it out (or false) to keep it off." % REF))


# ------------------------------------------------------------------------------------------------ text

def test_text_is_taken_as_it_is_up_to_4096_characters():
    assert check(TEXT, "qwen") == ("qwen", [])
    assert check(TEXT, "x" * 4096) == ("x" * 4096, [])
    assert check(TEXT, "x" * 4097) == (DROP, error(
        "value_too_large", "served_model_name: 4097 characters is more than the 4096 this lint allows",
        "Check where the value of %sserved_model_name comes from." % REF))


@pytest.mark.parametrize("value, text", [(12, "12"), (1.5, "1.5"), (1e3, "1000.0")])
def test_a_number_for_text_is_sent_as_its_text_with_a_warning(value, text):
    assert check(TEXT, value) == (text, [(
        "warning", "number_for_string",
        "served_model_name takes text; YAML gave the number %s, which SGLang receives as %r" % (repr(value), text),
        "Quote the value in YAML if you meant other text (an unquoted 012 is the number 10, 1e3 may be a float).")])


def test_a_number_that_is_not_finite_for_text():
    assert check(TEXT, float("nan")) == (DROP, error("value_not_finite", "argument --served-model-name: nan is not a finite number",
                                                     "Give %sserved_model_name text, quoted in YAML." % REF))


def test_a_yaml_boolean_for_text_says_to_quote_it():
    assert check(TEXT, True) == (DROP, error(
        "invalid_type", "argument --served-model-name: invalid str value: 'True'",
        "YAML read an unquoted yes/no/on/off/true/false as a boolean; quote it: %sserved_model_name: 'true'." % REF))
    assert check(dict(TEXT, type="nullable_str"), False)[1][0][3].endswith("quote it: %sserved_model_name: 'false'." % REF)


def test_a_mapping_or_null_for_text():
    hint = "Give %sserved_model_name one line of text; quote it in YAML if it could be read as another type." % REF
    assert check(TEXT, {"a": 1}) == (DROP, error("invalid_type", "argument --served-model-name: invalid str value: \"{'a': 1}\"",
                                                 hint))
    assert check(TEXT, None) == (DROP, error("invalid_type", "argument --served-model-name: invalid str value: 'None'", hint))


@pytest.mark.parametrize("value, shown", [("a\nb", "'\\n'"), ("a\tb", "'\\t'"), ("a\x7fb", "'\\x7f'"), ("a\x00b", "a NUL byte")])
def test_a_control_character_in_text(value, shown):
    assert check(TEXT, value) == (DROP, error(
        "control_character", "served_model_name: the value contains %s (a newline, NUL or other control character)" % shown,
        "Remove the control character from %sserved_model_name; a value must be one line of printable text." % REF))


@pytest.mark.parametrize("kind", [None, "str", "nullable_str", "parse_cuda_graph_backend_arg"])
def test_text_that_starts_with_a_dash_would_be_read_as_an_option(kind):
    assert check(dict(TEXT, type=kind), "-x") == (DROP, error(
        "value_looks_like_option", "served_model_name: the value '-x' starts with '-': SGLang's config loader passes it on"
        " the command line, where argparse reads it as an option (expected one argument)",
        "Remove the leading '-' from %sserved_model_name." % REF))


def test_a_dash_is_fine_for_an_option_with_its_own_type():
    assert check(dict(TEXT, type="parse_other"), "-x") == ("-x", [])
    assert check(TEXT, "a-b") == ("a-b", [])


def test_a_secret_is_never_shown():
    out, findings = check(dict(TEXT, dest="api_key", opts=["--api-key"]), "-secret-value")
    assert out is DROP and "secret-value" not in findings[0][2] and "'********'" in findings[0][2]
    out, findings = check(TEXT, "-hidden", secret=True)
    assert "hidden" not in findings[0][2]
    out, findings = check(dict(TEXT, dest="hf_token"), "-tok", name="custom_name")
    assert "tok'" not in findings[0][2]


# ------------------------------------------------------------------------------------------------ choices

def test_a_listed_choice_passes():
    assert check(CHOICE, "triton") == ("triton", [])


def test_a_near_typo_of_a_choice_gets_a_did_you_mean():
    assert check(CHOICE, "flashinfr") == (DROP, error(
        "invalid_choice", "argument --attention-backend: invalid choice: 'flashinfr' (choose from 'fa3', 'flashinfer', 'triton')",
        "Did you mean flashinfer?"))


def test_a_far_choice_asks_for_a_listed_one():
    assert check(CHOICE, "xyz")[1][0][3] == "Give %sattention_backend one of the listed choices." % REF


def test_a_known_removed_choice_gets_its_own_hint():
    action = {"opts": ["--cuda-graph-backend-decode"], "dest": "cuda_graph_backend_decode", "action": "_StoreAction",
              "type": "str", "choices": ["breakable", "full", "disabled"]}
    assert check(action, "tc_piecewise")[1][0][3] == "tc_piecewise was removed; select breakable, full, or disabled"


def test_choices_are_checked_after_the_type():
    action = dict(INT, choices=[1, 2, 4])
    assert check(action, "4") == (4, [("info", "coerced", "tp_size: the string '4' is read as the number 4", "")])
    assert check(action, 3)[1][0][2] == "argument --tp-size/--tp: invalid choice: 3 (choose from 1, 2, 4)"


# ------------------------------------------------------------------------------------------------ lists

def test_lists_of_values():
    assert check(LIST, [1, 2]) == ([1, 2], [])
    assert check(LIST, (1, 2)) == ([1, 2], [])
    assert check(LIST, 4) == ([4], [])
    assert check(LIST, "8") == ([8], [("info", "coerced", "cuda_graph_bs: the string '8' is read as the number 8", "")])
    assert check(dict(LIST, nargs="*"), [3]) == ([3], [])
    assert check(LIST, [1] * 4096) == ([1] * 4096, [])


def test_an_empty_list_is_left_out_with_the_default_named():
    assert check(LIST, []) == (DROP, [("info", "empty_list", "cuda_graph_bs: an empty list is left out of the config file"
                                       " (SGLang's loader skips it), so SGLang uses its default None", "")])
    assert check(dict(LIST, default=[1, 2]), [])[1][0][2].endswith("so SGLang uses its default [1, 2]")


def test_list_limits_and_shapes():
    assert check(LIST, [1] * 4097) == (DROP, error("value_too_large", "argument --cuda-graph-bs: 4097 values is more than the"
                                                   " 4096 this lint allows", "Check where the list comes from."))
    assert check(LIST, [1, [2]]) == (DROP, error("nested_list", "argument --cuda-graph-bs: list items must be plain values, not"
                                                 " list", "Flatten the list."))
    assert check(LIST, [{"a": 1}])[1][0][2].endswith("not dict")
    assert check(LIST, [(1,)])[1][0][2].endswith("not tuple")
    assert check(LIST, [1, None]) == (DROP, error("null_in_list", "argument --cuda-graph-bs: the list holds a null (~) item",
                                                  "Remove the empty item."))
    out, findings = check(LIST, [1, "x", 3])
    assert out is DROP and [f[1] for f in findings] == ["invalid_type"]


def test_a_fixed_number_of_values():
    assert check(PAIR, [1, 2]) == ([1, 2], [])
    assert check(PAIR, [1]) == (DROP, error("wrong_list_length", "argument --pair: expected 2 arguments, got 1",
                                            "Give %spair a list of exactly 2 values." % REF))
    assert check(ONE, [1, 2]) == (DROP, error("wrong_list_length", "argument --one: expected 1 argument, got 2",
                                              "Give %sone a list of exactly 1 value." % REF))
    assert check(ONE, 5) == ([5], [])


# ------------------------------------------------------------------------------------------------ JSON

def test_a_mapping_or_list_is_written_as_compact_sorted_json():
    assert check(LOADS, {"b": 1, "a": [1, 2]}) == ('{"a":[1,2],"b":1}', [])
    assert check(LOADS, [1, "x"]) == ('[1,"x"]', [])
    assert check(OVERRIDE, {"rope_scaling": {"type": "yarn", "factor": 4.0}}) == (
        '{"rope_scaling":{"factor":4.0,"type":"yarn"}}', [])


def test_a_json_string_is_re_dumped_compactly_in_its_own_order():
    assert check(LOADS, '{"b": 1,\n "a": 2}') == ('{"b":1,"a":2}', [])
    assert check(JLIST, '["a", "b"]') == ('["a","b"]', [])
    assert check(GRAPH, '{"bs": [1, 2]}') == ('{"bs":[1,2]}', [])


def test_json_for_an_option_named_for_json_even_when_its_dest_differs():
    action = dict(OVERRIDE, dest="json_model_override_args")
    assert check(action, {"a": 1}, name="other") == ('{"a":1}', [])
    named = dict(TEXT, dest="x")
    assert check(named, {"a": 1}, name="json_model_override_args") == ('{"a":1}', [])
    assert check(dict(TEXT, dest="model_loader_extra_config"), [1, 2])[0] is DROP  # a list: not a JSON object


def test_text_that_is_not_json():
    assert check(LOADS, "not json") == (DROP, error("invalid_type", "argument --loads: invalid loads value: 'not json'",
                                                    "Give %sloads a YAML mapping or list, or valid JSON as a string." % REF))
    assert check(GRAPH, "nope") == (DROP, error(
        "invalid_type", "argument --graph: invalid parse_cuda_graph_config_arg value: 'nope'",
        "Give %sgraph a YAML mapping (the collection writes it as JSON), or a JSON object as a string such as '{\"key\": 1}'."
        % REF))
    assert check(OVERRIDE, "nope") == (DROP, error(
        "invalid_json", "argument --json-model-override-args: the value is not JSON (Expecting value: line 1 column 1 (char 0)):"
        " 'nope'", "Give %sjson_model_override_args a YAML mapping (the collection writes it as JSON), or a JSON object as a"
        " string such as '{\"key\": 1}'." % REF))


def test_json_that_is_not_an_object_where_an_object_is_wanted():
    hint = ("Give %sgraph a YAML mapping (the collection writes it as JSON), or a JSON object as a string such as '{\"key\": 1}'."
            % REF)
    assert check(GRAPH, "[1]") == (DROP, error("invalid_json", "argument --graph: the value is JSON but not an object: '[1]'", hint))
    assert check(GRAPH, [1]) == (DROP, error("invalid_type", "argument --graph: invalid parse_cuda_graph_config_arg value: '[1]'",
                                             hint))
    assert check(OVERRIDE, '"text"')[1][0][1] == "invalid_json"


def test_json_that_is_not_a_list_where_a_list_is_wanted():
    hint = "Give %sjlist a YAML list, or a JSON list as a string such as '[\"a\", \"b\"]'." % REF
    assert check(JLIST, {"a": 1}) == (DROP, error("invalid_type", "argument --jlist: invalid json_list_type value: \"{'a': 1}\"",
                                                  hint))
    assert check(JLIST, '{"a": 1}') == (DROP, error("invalid_type", "argument --jlist: invalid json_list_type value:"
                                                    " '{\"a\": 1}'", hint))
    assert check(JLIST, ["a"]) == ('["a"]', [])


def test_other_values_for_json_options():
    assert check(OVERRIDE, 3) == (DROP, error(
        "invalid_type", "argument --json-model-override-args: invalid JSON value: '3'",
        "Give %sjson_model_override_args a YAML mapping (the collection writes it as JSON), or a JSON object as a string such as"
        " '{\"key\": 1}'." % REF))
    assert check(LOADS, True)[1][0][2] == "argument --loads: invalid loads value: 'True'"


def test_a_value_json_cannot_carry_is_refused():
    assert check(LOADS, {"a": float("nan")}) == (DROP, error(
        "invalid_type", "argument --loads: cannot be written as JSON: Out of range float values are not JSON compliant: nan",
        "Give %sloads plain YAML values only (strings, numbers, booleans, lists, mappings)." % REF))
    assert check(LOADS, {"a": {1, 2}})[1][0][1] == "invalid_type"


def test_nan_or_infinity_in_json_text_is_refused_not_raised():
    """json.loads takes NaN and Infinity, which are not JSON: the lint must say so, not raise (a bug it had)."""
    assert check(OVERRIDE, '{"rope_theta": NaN}') == (DROP, error(
        "invalid_json", "argument --json-model-override-args: the value is not JSON (Out of range float values are not JSON"
        " compliant: nan): '{\"rope_theta\": NaN}'",
        "Give %sjson_model_override_args a YAML mapping (the collection writes it as JSON), or a JSON object as a string such as"
        " '{\"key\": 1}'." % REF))
    assert check(LOADS, "[Infinity]")[1][0][1] == "invalid_json"


def test_json_up_to_65536_characters():
    body = '"' + "x" * (65536 - 2) + '"'
    assert check(LOADS, body) == (body, [])
    assert check(LOADS, body[:-1] + 'x"') == (DROP, error(
        "value_too_large", "argument --loads: 65537 characters of JSON is more than the 65536 this lint allows",
        "Check where the value of %sloads comes from." % REF))
    spaced = '"' + "x" * (65536 - 4) + '"  '  # 65536 characters as given, 65534 once re-dumped
    assert check(LOADS, spaced)[0] == spaced.strip()
    wide = {"k": "x" * 65536}
    assert check(LOADS, wide) == (DROP, error(
        "value_too_large", "argument --loads: %d characters of JSON is more than the 65536 this lint allows"
        % len('{"k":"%s"}' % ("x" * 65536)), "Check where the value of %sloads comes from." % REF))


def test_too_deep_json_text_is_a_type_error_not_a_crash():
    deep = "[" * 100000 + "]" * 100000
    out, findings = check(LOADS, deep)
    assert out is DROP and findings[0][1] in ("value_too_large", "invalid_type")
    deep = "[" * 30000 + "]" * 30000
    assert check(LOADS, deep)[1][0][:2] == ("error", "invalid_type")
