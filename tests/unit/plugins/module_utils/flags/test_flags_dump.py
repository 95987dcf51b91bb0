# -*- coding: utf-8 -*-
"""flags.dump on the controller side: the dump's command line, reading its output, and the table's file text.

The dump script itself runs in an SGLang venv (test_sglang_flags_dump.py); these are the three functions the
module and the action plugin call around it.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import dump

TABLE = {"sglang_version": "0.5.23", "prog": "sglang serve", "allow_abbrev": False,
         "serve_only": ["--model-type"],
         "actions": [{"dest": "model_path", "options": ["--model-path", "--model"], "nargs": None},
                     {"dest": "tp_size", "options": ["--tp-size", "--tp"], "type": "int"}]}


def test_the_command_runs_the_script_with_its_timeout():
    assert dump.dump_command("/venv/bin/python", 60) == ["/venv/bin/python", "-c", dump.DUMP_SCRIPT, "60"]


def test_the_script_given_to_python_is_python_that_prints_the_marked_table():
    script = dump.dump_command("/venv/bin/python", 60)[2]
    compile(script, "<dump>", "exec")
    assert 'print("GPUFLEET_FLAG_TABLE=" + json.dumps(table' in script
    assert "signal.alarm(int(sys.argv[1])" in script


def test_the_outer_timeout_leaves_the_script_five_seconds_and_kills_five_after():
    assert dump.dump_command("/venv/bin/python", 60, "/usr/bin/timeout") == [
        "/usr/bin/timeout", "--kill-after=5", "65", "/venv/bin/python", "-c", dump.DUMP_SCRIPT, "60"]


@pytest.mark.parametrize("timeout, inner, outer", [(0, "1", "6"), (-3, "1", "6"), (1, "1", "6"), (2.9, "2", "7")])
def test_the_timeout_is_a_whole_number_of_seconds_and_at_least_one(timeout, inner, outer):
    command = dump.dump_command("py", timeout, "timeout")
    assert (command[-1], command[2]) == (inner, outer)


def test_a_printed_table_is_read_back_whatever_comes_around_it():
    stdout = "loading plugins\nGPUFLEET_FLAG_TABLE=%s\nbye\n" % json.dumps(TABLE)
    assert dump.read_dump_output(0, stdout, "warning: something") == (TABLE, "")


def test_only_a_line_that_starts_with_the_marker_counts():
    stdout = " GPUFLEET_FLAG_TABLE=%s\nGPUFLEET_FLAG_TABLE=%s\n" % (json.dumps({"x": 1}), json.dumps(TABLE))
    assert dump.read_dump_output(0, stdout, "") == (TABLE, "")


def test_a_marker_line_that_is_not_json_is_said():
    table, why = dump.read_dump_output(0, "GPUFLEET_FLAG_TABLE={not json\n", "")
    assert table is None
    assert why.startswith("the dump printed a table that is not JSON: ")
    assert len(why) > len("the dump printed a table that is not JSON: ")


@pytest.mark.parametrize("printed", [
    [1, 2],
    {"sglang_version": "0.5.23"},
    {"sglang_version": "0.5.23", "actions": {"dest": "x"}},
    {"sglang_version": "", "actions": []},
    {"actions": []},
])
def test_json_that_is_not_a_flag_table_is_refused(printed):
    assert dump.read_dump_output(0, "GPUFLEET_FLAG_TABLE=" + json.dumps(printed), "") == (
        None, "the dump printed something that is not a flag table")


def test_a_table_with_no_actions_is_still_a_table():
    printed = {"sglang_version": "0.5.23", "actions": []}
    assert dump.read_dump_output(0, "GPUFLEET_FLAG_TABLE=" + json.dumps(printed), "") == (printed, "")


def test_a_failed_dump_says_its_rc_and_the_last_line_of_stderr():
    stderr = "Traceback (most recent call last):\n  File x\nModuleNotFoundError: No module named 'sglang'\n\n  \n"
    assert dump.read_dump_output(1, "nothing here\n", stderr) == (
        None, "the flag-table dump failed (rc 1): ModuleNotFoundError: No module named 'sglang'")


def test_a_silent_failure_says_no_output():
    assert dump.read_dump_output(124, "", "") == (None, "the flag-table dump failed (rc 124): no output")
    assert dump.read_dump_output(-9, None, None) == (None, "the flag-table dump failed (rc -9): no output")


def test_the_file_text_has_the_header_on_one_line_then_one_action_per_line():
    assert dump.to_text(TABLE) == (
        '{"sglang_version":"0.5.23","prog":"sglang serve","allow_abbrev":false,"serve_only":["--model-type"],'
        '"actions":[\n'
        '{"dest":"model_path","options":["--model-path","--model"],"nargs":null},\n'
        '{"dest":"tp_size","options":["--tp-size","--tp"],"type":"int"}\n'
        ']}\n')


def test_the_file_text_keeps_only_the_header_keys_and_reads_back():
    text = dump.to_text(dict(TABLE, help="left out", extra=1))
    assert json.loads(text) == TABLE
    assert text.count("\n") == 4


def test_a_header_key_missing_from_the_table_is_an_error():
    table = dict(TABLE)
    del table["serve_only"]
    with pytest.raises(KeyError):
        dump.to_text(table)


def test_a_table_that_does_not_read_back_as_itself_is_refused():
    """NaN is written as NaN but never equals itself: the check after rendering must catch such a table."""
    with pytest.raises(ValueError, match="^the rendered table does not read back as itself$"):
        dump.to_text(dict(TABLE, actions=[{"dest": "x", "default": float("nan")}]))
