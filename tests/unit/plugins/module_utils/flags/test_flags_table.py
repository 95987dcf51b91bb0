# -*- coding: utf-8 -*-
"""flags.table on its own: the index over one release's table, each lookup, the history across releases and
each way an option key can be bad, word for word (make mutation: tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import (
    STORE_CLASSES,
    FlagTable,
    FlagTableError,
    build_history,
    normalise_key,
    option_name,
)

TP = {"opts": ["--tensor-parallel-size", "--tp-size", "--tp"], "dest": "tp_size", "action": "_StoreAction", "default": 1}
PORT = {"opts": ["--port"], "dest": "port", "action": "_StoreAction", "default": 30000}
HELP = {"opts": ["-h", "--help"], "dest": "help", "action": "_HelpAction", "default": "==SUPPRESS=="}
SHORT = {"opts": ["-q"], "dest": "quiet", "action": "_StoreTrueAction", "default": False}
MODEL = {"opts": ["--model-path", "--model"], "dest": "model_path", "action": "_StoreAction", "default": None}
POSITIONAL = {"opts": [], "dest": "model", "action": "_StoreAction"}
TABLE = {"sglang_version": "0.5.23", "actions": [TP, PORT, HELP, SHORT, MODEL, POSITIONAL],
         "serve_only": [{"opts": ["--model-type"], "dest": "model_type"}, {"dest": "x"}]}


def test_option_names():
    assert option_name("--tp-size") == "tp_size"
    assert option_name("-q") == "q"
    assert option_name("tp_size") == "tp_size"


def test_the_store_classes_sglangs_config_loader_accepts():
    assert STORE_CLASSES == ("_StoreAction", "_StoreTrueAction")


def test_the_index():
    table = FlagTable(TABLE)
    assert table.release == "0.5.23"
    assert table.actions == [TP, PORT, HELP, SHORT, MODEL]
    assert table.by_dest == {"tp_size": [TP], "port": [PORT], "help": [HELP], "quiet": [SHORT], "model_path": [MODEL]}
    assert table.by_option == {"--tensor-parallel-size": TP, "--tp-size": TP, "--tp": TP, "--port": PORT, "-h": HELP,
                               "--help": HELP, "-q": SHORT, "--model-path": MODEL, "--model": MODEL}
    assert table.long_options == ["--help", "--model", "--model-path", "--port", "--tensor-parallel-size", "--tp",
                                  "--tp-size"]
    assert table.serve_only == {"--model-type": {"opts": ["--model-type"], "dest": "model_type"}}


def test_an_empty_table_and_one_without_a_release():
    table = FlagTable({"actions": []})
    assert (table.release, table.actions, table.long_options, table.serve_only) == ("", [], [], {})


def test_two_actions_with_one_dest_are_both_kept():
    other = {"opts": ["--old-port"], "dest": "port"}
    assert FlagTable({"actions": [PORT, other]}).by_dest == {"port": [PORT, other]}


@pytest.mark.parametrize("table", [None, [], {"actions": {}}, {"sglang_version": "0.5.23"}])
def test_what_is_not_a_table_is_refused_word_for_word(table):
    with pytest.raises(FlagTableError) as caught:
        FlagTable(table)
    assert str(caught.value) == "a flag table is a mapping with an 'actions' list (data/sglang_flags/<release>.json)"


@pytest.mark.parametrize("action", [{"opts": "--x", "dest": "x"}, {"opts": ["--x"]}, {"opts": ["--x"], "dest": 3}, "--x"])
def test_an_action_without_opts_or_dest_is_refused_word_for_word(action):
    with pytest.raises(FlagTableError) as caught:
        FlagTable({"actions": [action]})
    assert str(caught.value) == "every action of a flag table needs 'opts' (a list) and 'dest': %r" % (action,)


def test_the_canonical_option_is_named_like_the_dest_else_the_first_long_one():
    table = FlagTable(TABLE)
    assert table.canonical(TP) == "--tp-size"
    assert table.canonical(MODEL) == "--model-path"
    assert table.canonical(HELP) == "--help"
    assert table.canonical(SHORT) == "-q"
    assert table.canonical({"opts": ["--b", "--a"], "dest": "c"}) == "--b"


def test_lookups_by_sglang_server_args_name():
    table = FlagTable(TABLE)
    assert (table.has("tp_size"), table.has("tp-size"), table.has("tp"), table.has("quiet"), table.has("q")) == (
        True, True, True, False, False)
    assert table.action("tensor_parallel_size") is TP and table.action("nope") is None
    assert (table.default("tp_size"), table.default("port"), table.default("help"), table.default("nope")) == (
        1, 30000, None, None)


def test_prefix_matches_are_the_abbreviations_argparse_accepts():
    table = FlagTable(TABLE)
    assert table.prefix_matches("--tp") == ["--tp-size"]
    assert table.prefix_matches("--t") == ["--tensor-parallel-size", "--tp", "--tp-size"]
    assert table.prefix_matches("--port") == []
    assert table.prefix_matches("--mod") == ["--model", "--model-path"]


def test_labels_as_argparse_writes_them():
    table = FlagTable(TABLE)
    assert table.label(TP) == "argument --tensor-parallel-size/--tp-size/--tp"
    assert table.label(PORT) == "argument --port"


def test_history_oldest_release_first_with_dest_class_and_deprecation():
    tables = {
        "0.5.10": {"sglang_version": "0.5.10", "actions": [dict(PORT, deprecated=True), {"opts": ["--x"], "dest": "x"}]},
        "0.5.9": {"actions": [PORT]},
        "0.5.23": {"sglang_version": "0.5.23", "actions": [{"opts": [], "dest": "m"}, {"dest": "y"}]},
    }
    assert build_history(tables) == {
        "--port": [["0.5.9", "port", "_StoreAction", False], ["0.5.10", "port", "_StoreAction", True]],
        "--x": [["0.5.10", "x", None, False]]}
    assert build_history(tables, ["--x", "--nope"]) == {"--x": [["0.5.10", "x", None, False]]}
    assert build_history(tables, []) == {}
    assert build_history({"0.5.9": {}}) == {}


@pytest.mark.parametrize("key, option", [("tp_size", "--tp-size"), ("tp-size", "--tp-size"), ("--tp-size", "--tp-size"),
                                         ("--tp_size", "--tp-size"), ("TP", "--TP"), ("a1", "--a1")])
def test_good_option_keys(key, option):
    assert normalise_key(key) == (option, None)


@pytest.mark.parametrize("key, why", [
    (3, "option names are strings, not int"),
    (None, "option names are strings, not NoneType"),
    ("", "the option name '' is empty or contains control characters"),
    ("--", "the option name '--' is empty or contains control characters"),
    ("tp\x00size", "the option name 'tp\\x00size' is empty or contains control characters"),
    ("tp_size=2", "the option name 'tp_size=2' contains '=': give the value as the dict value"),
    ("--tp=2", "the option name '--tp=2' contains '=': give the value as the dict value"),
    ("tp size", "'tp size' is not an SGLang option name (letters, digits, '_' and '-' only)"),
    ("-tp", "'-tp' is not an SGLang option name (letters, digits, '_' and '-' only)"),
    ("tp.size", "'tp.size' is not an SGLang option name (letters, digits, '_' and '-' only)"),
])
def test_bad_option_keys_word_for_word(key, why):
    assert normalise_key(key) == (None, why)


def test_option_names_keep_their_letters():
    assert option_name("--XLA-flags") == "XLA_flags"


def test_a_positional_anywhere_is_skipped_and_the_rest_indexed():
    table = FlagTable({"actions": [POSITIONAL, TP, POSITIONAL, PORT]})
    assert table.actions == [TP, PORT]


def test_the_canonical_option_prefers_a_long_one_to_a_short_one_listed_first():
    assert FlagTable(TABLE).canonical({"opts": ["-q", "--quiet-mode"], "dest": "quiet"}) == "--quiet-mode"


def test_history_of_a_wanted_option_that_is_not_the_first_of_its_action():
    tables = {"0.5.9": {"actions": [{"opts": ["--a", "--b"], "dest": "b"}]}}
    assert build_history(tables, ["--b"]) == {"--b": [["0.5.9", "b", None, False]]}


def test_history_names_the_release_the_table_says_it_is():
    tables = {"0.5.10": {"sglang_version": "0.5.10.post1", "actions": [PORT]}}
    assert build_history(tables) == {"--port": [["0.5.10.post1", "port", "_StoreAction", False]]}
