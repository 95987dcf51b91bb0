# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's promises one at a time, with the exact findings, messages and results the operator sees.

The other preflight tests run the host check end to end; these hold each rule on its own (each exit status,
each cut-off at its boundary, each message and hint as written), so a change to one of them shows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpufleet.sglang.plugins.module_utils import secrets
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import preflight as pf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import releases
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import finding
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config

ROOT = Path(__file__).resolve().parents[5]
TABLE = json.loads((ROOT / "data" / "sglang_flags" / "0.5.23.json").read_text(encoding="utf-8"))
MODULE_SOURCE = (ROOT / "plugins" / "modules" / "sglang_preflight.py").read_text(encoding="utf-8")

TIMEOUT_HINT = ("Importing SGLang takes 6-9 s on a real install, resolution a few more; raise "
                "sglang_server_preflight_timeout if the host is slow or busy, or look for a hung import.")
SIGKILL_HINT = "It needs about 1 GB of memory on a real install; check dmesg for the OOM killer."
UNAVAILABLE_HINT = "SGLang is not importable from the venv; install it (sglang_install) or fix venv."
UNRECOGNIZED_HINT = ("The installed SGLang has no such option; check that sglang_install_version matches the "
                     "venv.")
STRAY_HINT = ("A stray value reached the command line: an on/off option that SGLang's config loader does not "
              "treat as store_true.")
REFUSED_HINT = "SGLang's own argument parser refused this value."
LOADER_HINT = "SGLang's --config loader or parser raised this while reading the flags."
CRASH_HINT = "Run it by hand to see the whole output (docs/preflight.md#host-check)."
HOST_HINT = ("SGLang's own resolution (resolve_once, check_server_args) refused these flags for this model on the "
             "host; change what it names. To see the whole traceback run the host check by hand "
             "(docs/preflight.md#host-check).")
MODEL_UNKNOWN_HINT = ("They run on the host once the weights are there (model_cache), or give the config with "
                      "the module's model_config option.")


def info_of(rc: int, seconds: float, **changes) -> dict:
    """The summary interpret_parser_run returns, with only what a case changes."""
    info = {"ran": True, "rc": rc, "seconds": seconds, "error": "", "sglang_version": "", "resolved": None,
            "device_added": False}
    info.update(changes)
    return info


def host_line(result: dict) -> str:
    """The line the host check prints with its outcome (HOST_CHECK_SCRIPT's last line)."""
    return "GPUFLEET_HOST_CHECK=" + json.dumps(result) + "\n"


# ---------------------------------------------------------------------------------------------------------------------
# The argument spec is the module's documented interface


def test_argument_spec_is_the_documented_options():
    """Every option with the type, default, requirement and choices docs of sglang_preflight give it."""
    documented = yaml.safe_load(re.search(r'DOCUMENTATION = r?"""(.*?)"""', MODULE_SOURCE, re.S).group(1))["options"]
    assert sorted(pf.ARGUMENT_SPEC) == sorted(documented)
    for name, doc in documented.items():
        spec = dict(pf.ARGUMENT_SPEC[name])
        spec.pop("no_log", None)
        expected = {"type": doc["type"]}
        for key in ("default", "required", "choices"):
            if key in doc:
                expected[key] = doc[key]
        assert spec == expected, name


def test_only_the_secret_flags_are_no_log():
    """secret_args holds API keys and passwords: Ansible must never log it, and no other option is hidden."""
    assert {name for name, spec in pf.ARGUMENT_SPEC.items() if spec.get("no_log")} == {"secret_args"}
    assert pf.ARGUMENT_SPEC["secret_args"]["no_log"] is True


# ---------------------------------------------------------------------------------------------------------------------
# Secrets back for the lint, and the host check's command line


def test_merge_secret_args_lets_the_secret_win_and_leaves_the_input_alone():
    plain = {"tp_size": 2, "api_key": "placeholder"}
    merged = pf.merge_secret_args(plain, {"api_key": "s3cr3t-key"})
    assert merged == {"tp_size": 2, "api_key": "s3cr3t-key"}
    assert plain == {"tp_size": 2, "api_key": "placeholder"}
    assert pf.merge_secret_args(plain, None) is plain
    assert pf.merge_secret_args("not a dict", {"api_key": "s3cr3t-key"}) == "not a dict"
    assert pf.merge_secret_args(None, {"api_key": "s3cr3t-key"}) is None


def test_parser_command_exactly():
    assert pf.parser_command("/v/bin/python", "/c.yaml", 30) == [
        "/v/bin/python", "-c", pf.HOST_CHECK_SCRIPT, "30", "parse", "--config", "/c.yaml"]
    assert pf.parser_command("/v/bin/python", "/c.yaml", 30, "/usr/bin/timeout", "resolve") == [
        "/usr/bin/timeout", "--kill-after=5", "35", "/v/bin/python", "-c", pf.HOST_CHECK_SCRIPT, "30", "resolve",
        "--config", "/c.yaml"]


@pytest.mark.parametrize("timeout,alarm,outer", [(0, "1", "6"), (-3, "1", "6"), (1, "1", "6"), (2, "2", "7"),
                                                 (7.9, "7", "12")])
def test_parser_command_is_bounded_by_at_least_one_second(timeout, alarm, outer):
    """signal.alarm(0) would switch the bound off: the alarm is never below one second, the outer guard 5 s later."""
    command = pf.parser_command("py", "c", timeout, "timeout")
    assert command[:3] == ["timeout", "--kill-after=5", outer]
    assert command[6] == alarm


def test_no_outer_guard_without_coreutils_timeout():
    assert pf.parser_command("py", "c", 5, "")[0] == "py"
    assert pf.parser_command("py", "c", 5, None)[0] == "py"


# ---------------------------------------------------------------------------------------------------------------------
# The host check's own outcome line


def test_a_garbled_outcome_line_is_no_outcome():
    """Only a JSON object after the marker is the outcome; anything else falls back to the exit status."""
    stdout = "GPUFLEET_HOST_CHECK={not json}\n"
    findings, info = pf.interpret_parser_run(0, stdout, "", 1, 60)
    assert (findings, info) == ([], info_of(0, 1.0))
    findings, info = pf.interpret_parser_run(0, "x GPUFLEET_HOST_CHECK={}\n", "", 1, 60)
    assert info["resolved"] is None


def test_the_outcome_says_resolved_and_device_added():
    stdout = host_line({"parsed": True, "resolved": True, "device_added": True, "error": None})
    assert pf.interpret_parser_run(0, stdout, "", 9.5, 60) == ([], info_of(0, 9.5, resolved=True, device_added=True))
    stdout = host_line({"parsed": True, "resolved": None, "device_added": 0, "error": None})
    assert pf.interpret_parser_run(0, stdout, "", 9.5, 60)[1]["device_added"] is False


def test_seconds_are_rounded_to_two_places():
    assert pf.interpret_parser_run(0, "", "", 6.256, 60)[1]["seconds"] == 6.26
    assert pf.interpret_parser_run(0, "", "", "3", 60)[1]["seconds"] == 3.0


# ---------------------------------------------------------------------------------------------------------------------
# A refusal by SGLang's resolution (resolve_once, check_server_args)


def test_resolution_refusal_is_one_host_finding_with_the_option_it_names():
    error = {"stage": "resolve", "type": "ValueError", "message": "--tp-size 3 does not divide 32 heads; "
             "see --attention-backend", "where": "srt/server_args.py:check_server_args"}
    stdout = "GPUFLEET_SGLANG_VERSION=0.5.23\nGPUFLEET_PARSE_OK\n" + host_line(
        {"parsed": True, "resolved": None, "device_added": True, "error": error})
    findings, info = pf.interpret_parser_run(3, stdout, "Traceback ...\nValueError: x\n", 12.0, 60, "0.5.23")
    assert findings == [finding("error", "host_check_refused", "tp_size",
                                "ValueError: --tp-size 3 does not divide 32 heads; see --attention-backend",
                                HOST_HINT, "host")]
    assert info == info_of(3, 12.0, sglang_version="0.5.23", device_added=True,
                           error="ValueError: --tp-size 3 does not divide 32 heads; see --attention-backend")


def test_resolution_refusal_comes_after_a_version_mismatch():
    error = {"stage": "resolve", "type": "RuntimeError", "message": "no", "where": ""}
    stdout = "GPUFLEET_SGLANG_VERSION=0.5.22\n" + host_line({"resolved": None, "error": error})
    findings, dummy = pf.interpret_parser_run(3, stdout, "", 1, 60, "0.5.23")
    assert [f["code"] for f in findings] == ["version_mismatch", "host_check_refused"]


def test_resolution_refusal_even_at_the_deadline_is_the_refusal():
    """It finished and said why (rc 3 after the timeout's worth of seconds): that is no timeout."""
    error = {"stage": "resolve", "type": "AssertionError", "message": "", "where": "srt/server_args.py:check"}
    findings, info = pf.interpret_parser_run(3, host_line({"error": error}), "", 60, 60)
    assert [f["code"] for f in findings] == ["host_check_refused"]
    assert info["error"] == "AssertionError: "


@pytest.mark.parametrize("error,text,flag", [
    ({"type": "ValueError", "message": "bad --mem-fraction-static"}, "ValueError: bad --mem-fraction-static",
     "mem_fraction_static"),
    ({"type": "AssertionError", "message": "", "where": "srt/server_args.py:check_server_args"},
     "AssertionError (SGLang gives no message) in srt/server_args.py:check_server_args", ""),
    ({"type": "AssertionError", "message": None, "where": ""}, "AssertionError (SGLang gives no message)", ""),
    ({"type": None, "message": "odd"}, "Exception: odd", ""),
    ({}, "Exception (SGLang gives no message)", ""),
    ({"type": "ValueError", "message": "token hf_abcdefghijklmnopqrstuvwxyz0123 refused"},
     "ValueError: token %s refused" % secrets.MASK, ""),
])
def test_resolution_finding(error, text, flag):
    assert pf.resolution_finding(error) == finding("error", "host_check_refused", flag, text, HOST_HINT, "host")


def test_resolution_finding_takes_the_first_option_named():
    item = pf.resolution_finding({"type": "ValueError", "message": "--enable-dp-attention needs --dp-size > 1"})
    assert item["flag"] == "enable_dp_attention"


# ---------------------------------------------------------------------------------------------------------------------
# Timeouts and kills


TIMEOUT_FINDING = finding("error", "parser_timeout", None, "the host check did not finish within 60 s (rc %s)",
                          TIMEOUT_HINT, "parser")


def timeout_finding(rc) -> dict:
    return dict(TIMEOUT_FINDING, message=TIMEOUT_FINDING["message"] % rc)


@pytest.mark.parametrize("rc", [124, -14, 142])
def test_the_timeout_exit_statuses_are_a_timeout_whenever_they_come(rc):
    """coreutils' timeout (124) and SIGALRM (-14, 142 from a shell) mean the bound was hit, even early."""
    findings, info = pf.interpret_parser_run(rc, "", "sglang serve: error: unrecognized arguments: --x\n", 2.0, 60)
    assert findings == [timeout_finding(rc)]
    assert info == info_of(rc, 2.0, error="timed out after 60 s")


@pytest.mark.parametrize("rc", [137, -9])
def test_sigkill_at_the_deadline_is_a_timeout_even_after_an_error_line(rc):
    stderr = "sglang serve: error: unrecognized arguments: --x\n"
    findings, info = pf.interpret_parser_run(rc, "", stderr, 60, 60)
    assert findings == [timeout_finding(rc)]
    assert info["error"] == "timed out after 60 s"


@pytest.mark.parametrize("rc", [137, -9])
def test_sigkill_before_the_deadline_is_a_kill(rc):
    findings, info = pf.interpret_parser_run(rc, "", "", 59.96, 60)
    assert findings == [finding("error", "parser_crashed", None, "the host check was killed (SIGKILL) after 60.0 s",
                                SIGKILL_HINT, "parser")]
    assert info == info_of(rc, 59.96, error="killed by SIGKILL after 60.0 s")


def test_any_failure_at_the_deadline_without_an_error_line_is_a_timeout():
    findings, info = pf.interpret_parser_run(1, "", "\n   \n", 60, 60)
    assert findings == [timeout_finding(1)]
    findings, info = pf.interpret_parser_run(1, "", "", 59.99, 60)
    assert findings == [finding("error", "parser_crashed", None, "the host check failed (rc 1): exit status 1",
                                CRASH_HINT, "parser")]
    assert info == info_of(1, 59.99, error="exit status 1")


def test_a_failure_at_the_deadline_that_says_why_is_not_a_timeout():
    findings, dummy = pf.interpret_parser_run(1, "", "ValueError: bad option 'x'\n", 61, 60)
    assert [f["code"] for f in findings] == ["parser_refused"]
    findings, dummy = pf.interpret_parser_run(2, "", "sglang serve: error: argument --x: bad\n", 61, 60)
    assert [f["code"] for f in findings] == ["parser_refused"]


def test_success_at_the_deadline_is_a_success():
    assert pf.interpret_parser_run(0, "", "", 75, 60) == ([], info_of(0, 75.0))


def test_the_timeout_message_names_the_bound_given():
    findings, info = pf.interpret_parser_run(124, "", "", 95, 90)
    assert findings[0]["message"] == "the host check did not finish within 90 s (rc 124)"
    assert info["error"] == "timed out after 90 s"


# ---------------------------------------------------------------------------------------------------------------------
# Failures read from the output


def test_missing_sglang_in_either_spelling_is_parser_unavailable():
    for line in ("ModuleNotFoundError: No module named 'sglang.srt'", "ImportError: No module named sglang"):
        findings, info = pf.interpret_parser_run(1, "", "Traceback (most recent call last):\n" + line + "\n", 0.5, 60)
        assert findings == [finding("error", "parser_unavailable", None, line, UNAVAILABLE_HINT, "parser")]
        assert info == info_of(1, 0.5, error=line)


def test_another_missing_module_is_not_parser_unavailable():
    line = "ModuleNotFoundError: No module named 'torch'"
    findings, dummy = pf.interpret_parser_run(1, "", line + "\n", 0.5, 60)
    assert findings == [finding("error", "parser_refused", None, line, LOADER_HINT, "parser")]


def test_every_unrecognized_option_is_its_own_finding():
    line = "sglang serve: error: unrecognized arguments: --enable-foo --bar-baz 3"
    findings, info = pf.interpret_parser_run(2, "", "usage: sglang serve [-h]\n" + line + "\n", 7, 60)
    assert findings == [
        finding("error", "parser_unrecognized", "enable_foo", "unrecognized arguments: --enable-foo",
                UNRECOGNIZED_HINT, "parser"),
        finding("error", "parser_unrecognized", "bar_baz", "unrecognized arguments: --bar-baz", UNRECOGNIZED_HINT,
                "parser")]
    assert info == info_of(2, 7.0, error=line)


def test_a_stray_value_is_a_refusal_with_its_own_hint():
    findings, dummy = pf.interpret_parser_run(2, "", "sglang serve: error: unrecognized arguments: true\n", 1, 60)
    assert findings == [finding("error", "parser_refused", None, "unrecognized arguments: true", STRAY_HINT,
                                "parser")]


def test_a_missing_required_option():
    findings, dummy = pf.interpret_parser_run(
        2, "", "sglang serve: error: the following arguments are required: --model-path/--model\n", 1, 60)
    assert findings == [finding("error", "parser_missing_required", "model_path",
                                "the following arguments are required: --model-path/--model",
                                "Set it in sglang_server_args.", "parser")]
    findings, dummy = pf.interpret_parser_run(
        2, "", "sglang serve: error: the following arguments are required: model\n", 1, 60)
    assert findings == [finding("error", "parser_missing_required", None,
                                "the following arguments are required: model", "Set it in sglang_server_args.",
                                "parser")]


def test_any_other_argparse_refusal():
    findings, dummy = pf.interpret_parser_run(
        2, "", "sglang serve: error: argument --tp-size/--tensor-parallel-size: invalid int value: 'two'\n", 1, 60)
    assert findings == [finding("error", "parser_refused", "tp_size",
                                "argument --tp-size/--tensor-parallel-size: invalid int value: 'two'", REFUSED_HINT,
                                "parser")]
    findings, dummy = pf.interpret_parser_run(2, "", "sglang serve: error: too few arguments\n", 1, 60)
    assert findings == [finding("error", "parser_refused", None, "too few arguments", REFUSED_HINT, "parser")]


def test_an_option_is_only_read_where_it_starts_a_word():
    """'a--b' is no option: the dashes must start a word (argparse's own text puts a space before them)."""
    findings, dummy = pf.interpret_parser_run(2, "", "p: error: value a--b for x\n", 1, 60)
    assert findings[0]["flag"] == ""


@pytest.mark.parametrize("message,flag", [
    ("Unsupported config option 'enable_tf32_matmul' with action 'BooleanOptionalAction'", "enable_tf32_matmul"),
    ("Invalid value for 'tp-size': two", "tp_size"),
    ("Invalid value(s) for 'json-model-override-args'", "json_model_override_args"),
    ("the config file is not a mapping", ""),
])
def test_a_loader_exception_names_the_key_it_quotes(message, flag):
    line = "ValueError: " + message
    stderr = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n" + line + "\n"
    findings, info = pf.interpret_parser_run(1, "", stderr, 1, 60)
    assert findings == [finding("error", "parser_refused", flag, line, LOADER_HINT, "parser")]
    assert info == info_of(1, 1.0, error=line)


def test_the_outcome_line_names_a_parse_stage_exception_over_the_traceback():
    """A config loader exception in the parse stage: the outcome's type and message, not stderr's last line."""
    error = {"stage": "parse", "type": "KeyError", "message": "option 'foo-bar'", "where": "x"}
    findings, info = pf.interpret_parser_run(3, host_line({"parsed": False, "error": error}),
                                             "some log line at the end\n", 1, 60)
    assert findings == [finding("error", "parser_refused", "foo_bar", "KeyError: option 'foo-bar'", LOADER_HINT,
                                "parser")]
    assert info == info_of(3, 1.0, error="KeyError: option 'foo-bar'")


def test_argparse_exit_in_the_outcome_keeps_argparses_own_line():
    error = {"stage": "parse", "type": "SystemExit", "message": "2", "where": "argparse"}
    line = "sglang serve: error: unrecognized arguments: --nope"
    findings, info = pf.interpret_parser_run(2, host_line({"parsed": False, "error": error}), line + "\n", 1, 60)
    assert [(f["code"], f["flag"]) for f in findings] == [("parser_unrecognized", "nope")]
    assert info["error"] == line


def test_an_outcome_error_that_is_not_a_mapping_is_ignored():
    findings, info = pf.interpret_parser_run(3, host_line({"error": "odd"}), "", 1, 60)
    assert findings == [finding("error", "parser_crashed", None, "the host check failed (rc 3): exit status 3",
                                CRASH_HINT, "parser")]
    assert info["error"] == "exit status 3"


def test_an_unexplained_failure_gives_its_last_line():
    findings, info = pf.interpret_parser_run(3, "", "first\nsomething odd  \n\n", 1, 60)
    assert findings == [finding("error", "parser_crashed", None, "the host check failed (rc 3): something odd",
                                CRASH_HINT, "parser")]
    assert info == info_of(3, 1.0, error="something odd")


def test_the_error_line_prefers_argparse_then_the_last_exception():
    stderr = ("sglang serve: error: first\nValueError: later\nsglang serve: error: argument --b: second\n"
              "RuntimeError: last\ntrailing noise\n")
    findings, info = pf.interpret_parser_run(2, "", stderr, 1, 60)
    assert info["error"] == "sglang serve: error: argument --b: second"
    assert [f["flag"] for f in findings] == ["b"]
    findings, info = pf.interpret_parser_run(1, "", "ValueError: first\nKeyError: second 'k'\nnoise\n", 1, 60)
    assert info["error"] == "KeyError: second 'k'"


def test_output_is_redacted_in_every_message():
    key = "hf_abcdefghijklmnopqrstuvwxyz0123"
    for stderr in ("sglang serve: error: argument --x: bad '%s'\n" % key, "ValueError: bad %s\n" % key,
                   "sglang serve: error: unrecognized arguments: %s\n" % key, "odd %s\n" % key):
        assert key not in json.dumps(pf.interpret_parser_run(2, "", stderr, 1, 60))
    error = {"stage": "resolve", "type": "ValueError", "message": key}
    assert key not in json.dumps(pf.interpret_parser_run(3, host_line({"error": error}), "", 1, 60))


def test_missing_output_reads_as_empty():
    assert pf.interpret_parser_run(0, None, None, 1, 60) == ([], info_of(0, 1.0))


# ---------------------------------------------------------------------------------------------------------------------
# The installed release against the linted one


def test_version_mismatch_exactly():
    findings, info = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.22  \n", "", 1, 60, "0.5.23")
    assert findings == [finding("error", "version_mismatch", None,
                                "the venv has SGLang 0.5.22, but the flags were linted for 0.5.23",
                                "Set sglang_install_version to the installed release, or install 0.5.23.", "parser")]
    assert info["sglang_version"] == "0.5.22"


def test_an_unknown_installed_release_says_why():
    with pytest.raises(releases.ReleaseError) as raised:
        releases.map_release("0.5.24rc1", None)
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.24rc1\n", "", 1, 60, "0.5.23")
    assert findings == [finding("error", "version_mismatch", None,
                                "the venv has SGLang 0.5.24rc1, which is not a release the lint knows: %s"
                                % raised.value.message, raised.value.hint, "parser")]


def test_no_release_to_compare_is_no_mismatch():
    for release in (None, ""):
        findings, info = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.4.0\n", "", 1, 60, release)
        assert findings == [] and info["sglang_version"] == "0.4.0"


def test_the_version_is_read_from_its_own_line_only():
    findings, info = pf.interpret_parser_run(0, "log GPUFLEET_SGLANG_VERSION=0.4.0\n", "", 1, 60, "0.5.23")
    assert findings == [] and info["sglang_version"] == ""


def test_a_post_or_local_build_keeps_its_releases_flags():
    for installed in ("0.5.23.post2", "0.5.23"):
        assert pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=%s\n" % installed, "", 1, 60, "0.5.23")[0] == []
    assert pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.23\n", "", 1, 60, "0.5.23.post1")[0] == []
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.6.23\n", "", 1, 60, "0.5.23")
    assert [f["code"] for f in findings] == ["version_mismatch"]


def test_the_release_map_names_the_installed_release():
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.24rc1\n", "", 1, 60, "0.5.22",
                                              {"0.5.24rc1": "0.5.23"})
    assert [f["message"] for f in findings] == ["the venv has SGLang 0.5.24rc1, but the flags were linted for 0.5.22"]


# ---------------------------------------------------------------------------------------------------------------------
# The report: lines, verdict and the result


def test_report_lines_exactly():
    items = [finding("error", "a", "tp_size", "bad", "set it"),
             finding("warning", "b", None, "odd", "", "parser"),
             {"severity": "info", "code": "", "flag": "", "message": "note"},
             finding("info", "c", "x", "seen", "", "host")]
    assert pf.report_lines(items) == ["ERROR sglang_server_args.tp_size: bad -- fix: set it",
                                      "WARNING b: odd [parser]",
                                      "INFO -: note",
                                      "INFO sglang_server_args.x: seen [host]"]
    assert pf.report_lines(items[:1], "") == ["ERROR tp_size: bad -- fix: set it"]
    assert pf.report_lines(items[:1], "srv.args") == ["ERROR srv.args.tp_size: bad -- fix: set it"]


@pytest.mark.parametrize("fail_on,blocked", [("error", {"error"}), ("warning", {"error", "warning"}),
                                             ("never", set()), ("nonsense", {"error"})])
def test_fail_on_decides_which_severities_fail(fail_on, blocked):
    for severity in ("error", "warning", "info"):
        failed, dummy = pf.verdict([finding(severity, "c", "f", "m")], fail_on, "0.5.23")
        assert failed is (severity in blocked), severity


def test_verdict_counts_in_words():
    one_each = [finding("error", "a", "x", "bad x"), finding("warning", "b", None, "odd", "hint b"),
                finding("info", "c", None, "note")]
    assert pf.verdict(one_each, "never", "0.5.23") == (
        False, "SGLang 0.5.23 would not run these launch flags as intended (1 error, 1 warning, 1 info). "
               "sglang_server_args.x: bad x | warning: b: odd (fix: hint b)")
    two_warnings = [finding("warning", "b", None, "odd"), finding("warning", "d", "y", "odder")]
    assert pf.verdict(two_warnings, "error", "0.5.22", "") == (
        False, "SGLang 0.5.22 launch flags: 0 errors, 2 warnings, 0 info. warning: b: odd | warning: y: odder")
    assert pf.verdict([], "error", "0.5.23") == (False, "SGLang 0.5.23 launch flags: 0 errors, 0 warnings, 0 info")


def test_build_result_exactly():
    lint = sf.lint_server_args({"model_path": "/srv/m", "api_key": "TOPSECRET-KEY"}, TABLE, "0.5.23")
    extra = [finding("info", "model_config_unknown", None, "not here")]
    parser = [finding("warning", "w", "tp_size", "watch", "", "parser")]
    result = pf.build_result(lint, parser, {"ran": True, "rc": 0}, "warning", extra, "srv.args")
    assert result == {
        "changed": False,
        "failed": True,
        "msg": "SGLang 0.5.23 launch flags: 0 errors, 1 warning, 1 info. warning: srv.args.tp_size: watch",
        "findings": parser + extra,
        "summary": {"error": 0, "warning": 1, "info": 1},
        "report": ["WARNING srv.args.tp_size: watch [parser]", "INFO model_config_unknown: not here"],
        "sglang_version": "0.5.23",
        "table_version": "0.5.23",
        "args": {"model_path": "/srv/m", "api_key": secrets.MASK},
        "config": render_server_config({"model-path": "/srv/m", "api-key": secrets.MASK}),
        "parser": {"ran": True, "rc": 0},
    }


def test_build_result_without_a_host_check():
    lint = sf.lint_server_args({"model_path": "/srv/m"}, TABLE, "0.5.23")
    result = pf.build_result(lint)
    assert result["parser"] == {"ran": False} and result["failed"] is False and result["findings"] == []
    assert result["msg"] == "SGLang 0.5.23 launch flags: 0 errors, 0 warnings, 0 info"


def test_build_result_when_the_config_cannot_be_rendered(monkeypatch):
    lint = sf.lint_server_args({"model_path": "/srv/m"}, TABLE, "0.5.23")

    def refuse(dummy):
        raise ValueError("a value YAML cannot hold")
    monkeypatch.setattr(pf, "render_for_report", refuse)
    assert pf.build_result(lint)["config"] == "# not rendered: a value YAML cannot hold\n"


def test_render_for_report_gives_the_file_and_its_masked_copy():
    lint = sf.lint_server_args({"model_path": "/srv/m", "api_key": "TOPSECRET-KEY"}, TABLE, "0.5.23")
    assert pf.render_for_report(lint) == (render_server_config({"model-path": "/srv/m", "api-key": "TOPSECRET-KEY"}),
                                          render_server_config({"model-path": "/srv/m", "api-key": secrets.MASK}))


def test_release_error_result_exactly():
    exc = releases.ReleaseError("no table for 0.9.0", "Add one.")
    item = finding("error", "release_unsupported", None, "no table for 0.9.0", "Add one.")
    assert pf.release_error_result(exc, "0.9.0") == {
        "changed": False, "failed": True, "msg": "no table for 0.9.0. Add one.", "findings": [item],
        "summary": {"error": 1, "warning": 0, "info": 0}, "report": ["ERROR release_unsupported: no table for "
                                                                     "0.9.0 -- fix: Add one."],
        "sglang_version": "0.9.0", "table_version": "", "args": {}, "config": "", "parser": {"ran": False}}
    assert pf.release_error_result(exc, "0.9.0", "warning")["failed"] is True
    assert pf.release_error_result(exc, "0.9.0", "never")["failed"] is False
    assert pf.release_error_result(exc, 9)["sglang_version"] == "9"
    assert pf.release_error_result(exc, {"__ansible_vault": "x"})["sglang_version"] == secrets.MASK


# ---------------------------------------------------------------------------------------------------------------------
# The models' config.json


def test_model_inputs_read_sglangs_spellings():
    assert pf.model_inputs({"model-path": "/m", "revision": "r1", "speculative-draft-model-path": "/d",
                            "speculative-draft-model-revision": "r2", "json-model-override-args": "{}"}) == {
        "model_path": "/m", "revision": "r1", "draft_path": "/d", "draft_revision": "r2", "overrides": "{}"}
    assert pf.model_inputs({"model": "/m2", "speculative-draft": "/d2"}) == {
        "model_path": "/m2", "revision": None, "draft_path": "/d2", "draft_revision": None, "overrides": None}
    assert pf.model_inputs({"model-path": "/m", "model": "/other"})["model_path"] == "/m"


def write_model(folder: Path, config: dict) -> str:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(folder)


MODEL_CONFIG = {"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32, "num_key_value_heads": 8,
                "hidden_size": 4096, "vocab_size": 128256, "max_position_embeddings": 8192}


def test_locate_models_reads_the_folders_and_applies_overrides_to_the_target_only(tmp_path):
    model = write_model(tmp_path / "m", MODEL_CONFIG)
    draft = write_model(tmp_path / "d", dict(MODEL_CONFIG, num_attention_heads=16))
    overrides = json.dumps({"num_attention_heads": 64})
    out = pf.locate_models({"model-path": model, "speculative-draft-model-path": draft,
                            "json-model-override-args": overrides})
    assert out["model"]["num_attention_heads"] == 64 and out["draft"]["num_attention_heads"] == 16
    assert (out["model_reason"], out["draft_reason"], out["draft_wanted"]) == ("", "", True)


def test_locate_models_without_a_draft(tmp_path):
    model = write_model(tmp_path / "m", MODEL_CONFIG)
    assert pf.locate_models({"model-path": model}) == {
        "model": pf.model_facts(MODEL_CONFIG), "model_reason": "", "draft": None, "draft_reason": "",
        "draft_wanted": False}


def test_locate_models_says_why_a_config_is_unknown(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{nope", encoding="utf-8")
    out = pf.locate_models({"model-path": str(tmp_path / "bad"),
                            "speculative-draft-model-path": str(tmp_path / "gone")})
    assert out["model"] is None and out["model_reason"].startswith(str(tmp_path / "bad" / "config.json")
                                                                   + " is not JSON: ")
    assert out["draft"] is None
    assert out["draft_reason"] == "%s does not exist yet (the weights are not there yet)" % (tmp_path / "gone")
    assert out["draft_wanted"] is True
    assert pf.locate_models({})["model_reason"] == "model_path is not set"


def test_locate_models_takes_the_given_configs_first(tmp_path):
    out = pf.locate_models({"model-path": str(tmp_path / "gone")}, {}, MODEL_CONFIG,
                           dict(MODEL_CONFIG, vocab_size=32000))
    assert out["model"] == pf.model_facts(MODEL_CONFIG) and out["model_reason"] == ""
    assert out["draft"]["vocab_size"] == 32000 and out["draft_wanted"] is False


def test_locate_models_finds_a_hub_model_in_the_cache_the_environment_names(tmp_path):
    repo = tmp_path / "hf" / "hub" / "models--org--m"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("a" * 40, encoding="utf-8")
    write_model(repo / "snapshots" / ("a" * 40), MODEL_CONFIG)
    out = pf.locate_models({"model-path": "org/m"}, {"HF_HOME": str(tmp_path / "hf")})
    assert out["model"] == pf.model_facts(MODEL_CONFIG)


def test_model_findings_exactly():
    assert pf.model_findings({"model": {"architecture": "X"}, "draft_wanted": False}) == []
    assert pf.model_findings({"model": None, "model_reason": "/m does not exist yet", "draft_wanted": True,
                              "draft": None, "draft_reason": "/d is gone"}) == [
        finding("info", "model_config_unknown", None,
                "the model's config.json is not available here (/m does not exist yet): the checks that need it "
                "(encoder disaggregation, context_length, the head split by tp_size, quantization, the draft "
                "model's shape) were skipped", MODEL_UNKNOWN_HINT),
        finding("info", "draft_config_unknown", "speculative_draft_model_path",
                "the draft model's config.json is not available here (/d is gone): its shape was not checked")]
    assert [f["message"] for f in pf.model_findings({"model": {}, "draft_wanted": True, "draft": None})] == [
        "the draft model's config.json is not available here (unknown): its shape was not checked"]
    assert "(unknown)" in pf.model_findings({"model": None})[0]["message"]
    assert pf.model_findings({"model": {}, "draft_wanted": True, "draft": {}}) == []


def skipped(reason: str) -> dict:
    return finding("info", "resolution_skipped", None,
                   "SGLang's resolve_once and check_server_args were not run on the host: %s; only its argument "
                   "parser checked the flags" % reason, "", "host")


def test_resolution_plan_exactly():
    clean = sf.lint_server_args({"model_path": "/srv/m"}, TABLE, "0.5.23")
    broken = sf.lint_server_args({"model_path": "/srv/m", "tp_size": "x"}, TABLE, "0.5.23")
    known = {"model": {}, "draft_wanted": False}
    assert pf.resolution_plan(True, clean, known) == ("resolve", None)
    assert pf.resolution_plan(True, clean, dict(known, draft_wanted=True, draft={})) == ("resolve", None)
    assert pf.resolution_plan(False, broken, {"model": None}) == (
        "parse", skipped("sglang_server_preflight_resolve is false"))
    assert pf.resolution_plan(True, broken, {"model": None}) == (
        "parse", skipped("the lint found errors; fix them first"))
    assert pf.resolution_plan(True, clean, {"model": None, "model_reason": "gone"}) == (
        "parse", skipped("the model's config.json is not on the host (gone)"))
    assert pf.resolution_plan(True, clean, {"model": None}) == (
        "parse", skipped("the model's config.json is not on the host (unknown)"))
    assert pf.resolution_plan(True, clean, dict(known, draft_wanted=True, draft=None, draft_reason="away")) == (
        "parse", skipped("the draft model's config.json is not on the host (away)"))
    assert pf.resolution_plan(True, clean, dict(known, draft_wanted=True, draft=None)) == (
        "parse", skipped("the draft model's config.json is not on the host (unknown)"))


def test_a_lint_with_only_warnings_still_resolves():
    lint = sf.LintResult("0.5.23", "0.5.23", [finding("warning", "w", None, "odd"), finding("info", "i", None, "n")],
                         {}, {})
    assert pf.resolution_plan(True, lint, {"model": {}}) == ("resolve", None)


# ---------------------------------------------------------------------------------------------------------------------
# The lint as the module and the action plugin run it


def test_lint_for_host_gives_the_model_facts_to_the_lint():
    """The given config.json reaches the model rules: 32 heads do not split over tp_size 3."""
    params = {"sglang_version": "0.5.23", "model_config": MODEL_CONFIG}
    lint, models, extra = pf.lint_for_host({"model_path": "/srv/m", "tp_size": 3}, TABLE, params)
    assert models["model"] == pf.model_facts(MODEL_CONFIG) and extra == []
    assert "tp_size" in [f["flag"] for f in lint.errors]
    lint, models, extra = pf.lint_for_host({"model_path": "/srv/m", "tp_size": 3}, TABLE, {"sglang_version": "0.5.23"})
    assert [f["code"] for f in extra] == ["model_config_unknown"]
    assert "tp_size" not in [f["flag"] for f in lint.errors]


def test_lint_for_host_names_the_flags_by_the_variable_given():
    """The hints name the flags as the operator wrote them: the variable given, else sglang_server_args."""
    def hints(params) -> list:
        lint, dummy, dummy2 = pf.lint_for_host({"model_path": "/srv/m", "tp_size": "x"}, TABLE,
                                               dict(params, sglang_version="0.5.23"))
        return [f["hint"] for f in lint.findings if f["code"] == "invalid_type"]
    assert hints({"variable": "srv.args"}) == ["Give srv.args.tp_size a whole number, e.g. srv.args.tp_size: 1."]
    default = ["Give sglang_server_args.tp_size a whole number, e.g. sglang_server_args.tp_size: 1."]
    assert hints({"variable": ""}) == default
    assert hints({}) == default


def test_lint_for_host_passes_the_opt_in_for_an_open_server():
    args = {"model_path": "/srv/m", "host": "0.0.0.0"}
    closed, dummy, dummy2 = pf.lint_for_host(args, TABLE, {"sglang_version": "0.5.23"})
    opened, dummy, dummy2 = pf.lint_for_host(args, TABLE, {"sglang_version": "0.5.23",
                                                           "allow_open_without_api_key": "yes"})
    assert [f["severity"] for f in closed.findings if f["code"] == "open_without_api_key"] == ["error"]
    assert [f["severity"] for f in opened.findings if f["code"] == "open_without_api_key"] == ["warning"]


def test_lint_for_host_treats_the_secret_args_keys_as_secret():
    args = {"model_path": "/srv/m", "served_model_name": "private-name"}
    lint, dummy, dummy2 = pf.lint_for_host(args, TABLE, {"sglang_version": "0.5.23",
                                                         "secret_args": {"served_model_name": "private-name"}})
    assert lint.redacted_args()["served_model_name"] == secrets.MASK
    plain, dummy, dummy2 = pf.lint_for_host(args, TABLE, {"sglang_version": "0.5.23"})
    assert plain.redacted_args()["served_model_name"] == "private-name"


def test_lint_for_host_says_when_the_release_was_mapped():
    params = {"sglang_version": "0.5.24rc1", "release_map": {"0.5.24rc1": "0.5.23"}, "model_config": MODEL_CONFIG}
    lint, dummy, extra = pf.lint_for_host({"model_path": "/srv/m"}, TABLE, params)
    assert lint.release == "0.5.23"
    assert extra == [finding("info", "release_mapped", None,
                             "SGLang 0.5.24rc1 is linted as release 0.5.23, as sglang_server_release_map says")]


def test_lint_for_host_hands_the_service_environment_to_the_rules_unless_facts_have_one():
    """SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN in the service's environment lets context_length pass the model."""
    args = {"model_path": "/srv/m", "context_length": 65536}
    base = {"sglang_version": "0.5.23", "model_config": MODEL_CONFIG}

    def context_errors(params) -> list:
        lint, dummy, dummy2 = pf.lint_for_host(args, TABLE, params)
        return [f["severity"] for f in lint.findings if f["flag"] == "context_length"]
    refused = context_errors(base)
    assert "error" in refused
    allowed = context_errors(dict(base, service_env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}))
    assert "error" not in allowed
    assert context_errors(dict(base, service_env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"},
                               facts={"environment": {}})) == refused


def test_lint_for_host_reads_the_tables_history():
    """The table's history turns an unknown option into one a later release added."""
    table = dict(TABLE, history={"--gpufleet-later-option": [["0.5.30", "gpufleet_later_option", "store_true",
                                                              False]]})
    lint, dummy, dummy2 = pf.lint_for_host({"model_path": "/srv/m", "gpufleet_later_option": True}, table,
                                           {"sglang_version": "0.5.23", "model_config": MODEL_CONFIG})
    assert [(f["code"], f["flag"]) for f in lint.errors] == [("flag_not_in_release", "gpufleet_later_option")]


def test_lint_for_host_applies_the_rules_release_given():
    params = {"sglang_version": "0.5.23", "model_config": MODEL_CONFIG}
    lint, dummy, dummy2 = pf.lint_for_host({"model_path": "/srv/m"}, TABLE, dict(params, rules_release="0.5.22"))
    assert [f["code"] for f in lint.findings] == ["rules_from_nearest_release"]
    lint, dummy, dummy2 = pf.lint_for_host({"model_path": "/srv/m"}, TABLE, params)
    assert lint.findings == []


def test_missing_stderr_on_a_failure_reads_as_no_error_line():
    """No stderr at all is the same as an empty one: the exit status speaks, or the deadline does."""
    findings, info = pf.interpret_parser_run(1, None, None, 1, 60)
    assert findings == [finding("error", "parser_crashed", None, "the host check failed (rc 1): exit status 1",
                                CRASH_HINT, "parser")]
    assert info == info_of(1, 1.0, error="exit status 1")
    assert pf.interpret_parser_run(1, None, None, 60, 60)[0] == [timeout_finding(1)]


def test_locate_models_still_looks_for_the_draft_when_the_model_is_unknown(tmp_path):
    """The draft's shape is checked on its own: a missing or broken target config does not stop its lookup."""
    draft = write_model(tmp_path / "d", dict(MODEL_CONFIG, vocab_size=32000))
    out = pf.locate_models({"model-path": str(tmp_path / "gone"), "speculative-draft-model-path": draft})
    assert out["model"] is None and out["draft"] == pf.model_facts(dict(MODEL_CONFIG, vocab_size=32000))
    assert out["model_reason"] == "%s does not exist yet (the weights are not there yet)" % (tmp_path / "gone")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("[1]", encoding="utf-8")
    out = pf.locate_models({"model-path": str(tmp_path / "bad"), "speculative-draft-model-path": draft})
    assert out["model"] is None and out["model_reason"] != "" and out["draft"]["vocab_size"] == 32000


def test_lint_for_host_takes_the_given_draft_config():
    params = {"sglang_version": "0.5.23", "model_config": MODEL_CONFIG,
              "draft_model_config": dict(MODEL_CONFIG, vocab_size=32000)}
    dummy, models, extra = pf.lint_for_host({"model_path": "/srv/m", "speculative_algorithm": "EAGLE",
                                             "speculative_draft_model_path": "/srv/d"}, TABLE, params)
    assert models["draft"] == pf.model_facts(dict(MODEL_CONFIG, vocab_size=32000)) and extra == []
