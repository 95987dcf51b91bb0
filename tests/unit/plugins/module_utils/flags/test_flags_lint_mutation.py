# -*- coding: utf-8 -*-
"""flags.lint on a small synthetic flag table (make mutation MODULES=flags/lint): the exact finding (severity, code,
flag, message, hint) of each per-key problem (bad key, --config, serve-only, duplicate, conflicting, unset,
config-unsupported, deprecated, removed, not yet added, abbreviation, ambiguous, unknown), of each release finding,
and the RuleContext helpers the cross-flag rules use. Release boundaries: a history entry of the release linted
itself is neither older nor newer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import FlagTable


def A(opts, dest, action="_StoreAction", **extra):
    entry = {"opts": opts, "dest": dest, "action": action}
    entry.update(extra)
    return entry


TABLE = {"sglang_version": "0.5.23", "actions": [
    A(["--model-path"], "model_path", type="str", required=True),
    A(["--tp-size", "--tp"], "tp_size", type="int", default=1),
    A(["--tensor-parallel-size"], "tp_size", type="int", default=1),
    A(["--enable-metrics"], "enable_metrics", "_StoreTrueAction", default=False),
    A(["--disable-cuda-graph"], "disable_cuda_graph", "_StoreTrueAction", default=False, deprecated=True),
    A(["--old-name"], "new_name", type="str", deprecated=True),
    A(["--new-name"], "new_name", type="str"),
    A(["--legacy-opt"], "legacy_opt", type="str", deprecated=True),
    A(["--verbosity"], "verbosity", "_CountAction"),
    A(["--quiet-count"], "quiet", "_CountAction", deprecated=True),
    A(["--quiet"], "quiet", "_StoreTrueAction", default=False),
    A(["--stream-interval"], "stream_interval", type="int", default=1),
    A(["--stream-output"], "stream_output", "_StoreTrueAction", default=False),
    A(["--cache-a"], "cache_a", type="int"),
    A(["--cache-b"], "cache_b", type="int"),
    A(["--renamed-opt"], "gone_dest", type="int"),
    A(["--attention-backend"], "attention_backend", type="str", choices=["fa3", "triton"]),
], "serve_only": [{"opts": ["--model-type"], "dest": "model_type"}]}

MODEL = {"model_path": "/m"}


def lint(args, **kwargs):
    result = sf.lint_server_args(args, TABLE, **kwargs)
    return [(f["severity"], f["code"], f["flag"], f["message"], f["hint"]) for f in result.findings]


def one(args, **kwargs):
    found = lint(dict(MODEL, **args), **kwargs)
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------------------------------------------ per key

def test_a_key_that_is_not_text():
    assert lint({"model_path": "/m", 5: 1}) == [("error", "bad_key", "", "sglang_server_args: option names are strings,"
                                                 " not int", "Key sglang_server_args by SGLang's option names, e.g. tp_size,"
                                                 " tp-size or --tp-size.")]


def test_config_and_help_cannot_be_set():
    assert one({"config": "x"}) == ("error", "not_settable", "config", "--config cannot be set in SGLang's --config file",
                                    "The collection passes the config file itself; remove config.")
    assert one({"--help": True})[1:3] == ("not_settable", "help")


def test_a_serve_only_flag():
    assert one({"model_type": "llm"}) == (
        "error", "serve_only_flag", "model_type", "--model-type is taken by the `sglang serve` wrapper before argparse"
        " runs, so SGLang's --config file cannot set it", "Remove model_type: the unit's ExecStart already passes"
        " --model-type llm.")


def test_a_flag_given_twice_and_two_flags_for_one_setting():
    assert lint({"model_path": "/m", "tp": 2, "tp_size": 2}) == [
        ("error", "duplicate_flag", "tp_size", "tp_size is given twice (as 'tp' and 'tp_size')", "Keep one of them.")]
    assert lint({"model_path": "/m", "tp": 2, "tensor_parallel_size": 3}) == [
        ("error", "conflicting_flags", "tp", "tensor_parallel_size and tp set the same SGLang setting (tp_size)",
         "Keep one of them.")]


def test_a_null_value_is_left_out_with_the_default_named():
    assert one({"enable_metrics": None}) == ("info", "unset", "enable_metrics", "enable_metrics is null (~): left out of"
                                             " the config file, so SGLang uses its default False", "")


def test_actions_the_config_loader_refuses():
    assert one({"verbosity": 1}) == (
        "error", "config_unsupported", "verbosity", "--verbosity (argparse action _CountAction) cannot be set from SGLang's"
        " --config file: its loader takes only store and store_true options and refuses the rest (\"Unsupported config"
        " option 'verbosity' with action '_CountAction'\")",
        "verbosity cannot be set through sglang_server_args; leave it at SGLang's default.")
    # deprecated, and a store option of the same dest exists: that one is the advice
    assert one({"quiet_count": 1}) == (
        "error", "config_unsupported", "quiet_count", "deprecated --quiet-count (argparse action _CountAction) cannot be"
        " set from SGLang's --config file: its loader takes only store and store_true options and refuses the rest"
        " (\"Unsupported config option 'quiet' with action '_CountAction'\")",
        "Use quiet instead (same setting, new name).")


def test_deprecated_flags():
    assert one({"old_name": "x"}) == ("warning", "deprecated_flag", "old_name", "--old-name is deprecated in SGLang 0.5.23",
                                      "Use new_name instead (same setting, new name).")
    assert one({"legacy_opt": "x"}) == ("warning", "deprecated_flag", "legacy_opt", "--legacy-opt is deprecated in SGLang"
                                        " 0.5.23", "SGLang will remove it; check its release notes for the replacement.")
    assert one({"disable_cuda_graph": True}) == (
        "warning", "deprecated_flag", "disable_cuda_graph", "'--disable-cuda-graph' is deprecated and will be removed in a"
        " future release. Use '--cuda-graph-backend-{decode,prefill}=disabled' instead.",
        "Use cuda_graph_backend_decode: disabled instead (also set cuda_graph_backend_prefill: disabled).")


def test_sglangs_own_deprecation_text_only_in_its_release_range():
    # disable_cuda_graph's curated advice and message are for 0.5.14 and later
    found = lint(dict(MODEL, disable_cuda_graph=True), release="0.5.13")
    assert ("warning", "deprecated_flag", "disable_cuda_graph", "--disable-cuda-graph is deprecated in SGLang 0.5.13",
            "SGLang will remove it; check its release notes for the replacement.") in found


HISTORY = {
    "--gone-flag": [["0.5.10", "gone_flag", "_StoreAction", False], ["0.5.20", "gone_dest", "_StoreAction", False]],
    "--lost-flag": [["0.5.10", "lost_flag", "_StoreAction", False]],
    "--future-flag": [["0.5.24", "future_flag", "_StoreAction", False], ["0.5.25", "future_flag", "_StoreAction", False]],
    "--same-release": [["0.5.23", "same_release", "_StoreAction", False]],
    "--same-post": [["0.5.23.post1", "same_post", "_StoreAction", False]],
    "--cuda-graph-bs": [["0.5.13", "cuda_graph_bs", "_StoreAction", False]],
    "--enable-met": [["0.5.10", "enable_met", "_StoreAction", False]],
    "--stream": [["0.5.10", "stream", "_StoreAction", False]],
}


def test_removed_flags_with_their_advice():
    assert one({"gone_flag": 1}, history=HISTORY) == (
        "error", "removed_flag", "gone_flag", "SGLang 0.5.23 no longer has --gone-flag (last in 0.5.20); it would fail with:"
        " unrecognized arguments: --gone-flag", "Use renamed_opt instead (same setting, new name).")
    assert one({"lost_flag": 1}, history=HISTORY) == (
        "error", "removed_flag", "lost_flag", "SGLang 0.5.23 no longer has --lost-flag (last in 0.5.10); it would fail with:"
        " unrecognized arguments: --lost-flag", "Drop it; SGLang 0.5.23 has no replacement for it.")
    assert one({"cuda_graph_bs": [1]}, history=HISTORY) == (
        "error", "removed_flag", "cuda_graph_bs", "SGLang 0.5.23 no longer has --cuda-graph-bs (last in 0.5.13); it would"
        " fail with: unrecognized arguments: --cuda-graph-bs",
        "Use cuda_graph_bs_decode instead (CUDA-graph batch sizes are per phase now).")


def test_removed_flags_known_only_from_the_curated_list():
    assert one({"enable_piecewise_cuda_graph": True}) == (
        "error", "removed_flag", "enable_piecewise_cuda_graph", "SGLang 0.5.23 no longer has --enable-piecewise-cuda-graph;"
        " it would fail with: unrecognized arguments: --enable-piecewise-cuda-graph",
        "Drop it: the piecewise (prefill) CUDA graph is on by default since 0.5.10; cuda_graph_backend_prefill selects its"
        " backend from 0.5.14.")
    assert one({"enforce_piecewise_cuda_graph": True})[4] == (
        "Use cuda_graph_backend_prefill: breakable instead (an explicit prefill CUDA-graph backend is locked and skips"
        " every auto-disable rule, which is what --enforce-piecewise-cuda-graph did; 0.5.14-0.5.19 mapped it to the"
        " tc_piecewise backend, which 0.5.23 removed).")


def test_a_removed_flag_says_what_argparse_would_do_with_it_now():
    assert one({"enable_met": True}, history=HISTORY) == (
        "error", "removed_flag", "enable_met", "SGLang 0.5.23 no longer has --enable-met (last in 0.5.10); it would fail"
        " with: argparse would silently read --enable-met as --enable-metrics",
        "Drop it; SGLang 0.5.23 has no replacement for it.")
    assert one({"stream": 1}, history=HISTORY)[3] == (
        "SGLang 0.5.23 no longer has --stream (last in 0.5.10); it would fail with: ambiguous option: --stream could match"
        " --stream-interval, --stream-output")


def test_a_flag_of_a_later_release():
    assert one({"future_flag": 2}, history=HISTORY) == (
        "error", "flag_not_in_release", "future_flag", "--future-flag is not an option of SGLang 0.5.23 (first in 0.5.24);"
        " it would fail with: unrecognized arguments: --future-flag",
        "Install SGLang 0.5.24 or newer (sglang_install_version), or drop future_flag.")


@pytest.mark.parametrize("key", ["same_release", "same_post"])
def test_a_history_entry_of_the_release_itself_is_neither_older_nor_newer(key):
    option = "--" + key.replace("_", "-")
    assert one({key: 1}, history=HISTORY) == (
        "error", "unknown_flag", key, "unrecognized arguments: %s" % option,
        "Drop it, or see `sglang serve --help` of SGLang 0.5.23 for the option names.")


def test_abbreviations_ambiguous_prefixes_and_typos():
    assert one({"enable_met": True}) == (
        "error", "abbreviation", "enable_met", "--enable-met is an abbreviation of --enable-metrics; SGLang accepts unique"
        " prefixes, but a later release can make it ambiguous or point it elsewhere", "Write the full name: enable_metrics.")
    assert one({"stream": 1}) == ("error", "ambiguous_flag", "stream", "ambiguous option: --stream could match"
                                  " --stream-interval, --stream-output",
                                  "Drop it, or see `sglang serve --help` of SGLang 0.5.23 for the option names.")
    assert one({"cache_c": 1}) == ("error", "unknown_flag", "cache_c", "unrecognized arguments: --cache-c",
                                   "Did you mean cache_a or cache_b?")
    assert one({"tpp_size": 1})[4] == "Did you mean tp_size?"


def test_a_required_flag_never_given():
    assert lint({}) == [("error", "missing_required", "model_path", "the following arguments are required: --model-path",
                         "Set sglang_server_args.model_path.")]
    assert lint({}, variable="extra")[0][4] == "Set extra.model_path."


# ------------------------------------------------------------------------------------------------ releases

def test_not_a_dict():
    assert lint([1]) == [("error", "args_not_a_dict", "", "sglang_server_args must be a dict of SGLang option names to"
                          " values, not list", "Write it as a YAML mapping, e.g. {model_path: /models/x, tp_size: 2}.")]


def test_a_table_newer_than_the_release():
    assert lint(MODEL, release="0.5.22") == [("error", "table_newer_than_release", "", "the flag table is for SGLang"
                                              " 0.5.23, newer than the release linted (0.5.22)",
                                              "Pass the table of the installed release.")]


def test_a_table_older_than_the_release():
    assert lint(MODEL, release="0.5.24") == [(
        "info", "table_nearest_older", "", "no flag table was dumped for SGLang 0.5.24; linted against the nearest older"
        " one (0.5.23)", "Flags that 0.5.24 added are reported as unknown; a deploy to a host with 0.5.24 installed dumps"
        " its table (sglang_server_flag_tables_dir).")]


def test_a_release_written_another_way():
    assert lint(MODEL, release="v0.5.23") == []
    assert lint(MODEL, release=" 0.5.23 ") == []
    assert lint(MODEL, release="0.5.23.post0") == [("info", "release_normalised", "",
                                                    "SGLang 0.5.23.post0 is linted as release 0.5.23", "")]


def test_a_table_whose_release_cannot_be_read_is_taken_as_the_release():
    table = dict(TABLE, sglang_version="nightly")
    assert sf.lint_server_args(MODEL, table, "0.5.23").findings == []


def test_rules_of_another_release():
    assert lint(MODEL, rules_release="0.5.21") == [(
        "info", "rules_from_nearest_release", "", "the cross-flag rules applied are those of SGLang 0.5.21, the nearest"
        " release this collection knows: rules that 0.5.23 added or changed are not checked here, only by the host check",
        "Update the collection for rules written for SGLang 0.5.23 (plugins/module_utils/flags/rules.py).")]
    assert lint(MODEL, rules_release="0.5.23") == []
    assert lint(MODEL, rules_release="x") == [(
        "error", "release_invalid", "", "SGLang release 'x' is not a release number such as '0.5.23'",
        "Give the version pip installs (pip show sglang), quoted in YAML: sglang_install_version: '0.5.23'.")]


def test_a_rule_that_fails_is_a_warning_not_a_crash(monkeypatch):
    def broken(ctx):
        raise KeyError("tp_size")

    rules = [SimpleNamespace(name="broken_rule", since=None, until=None, requires=(), check=broken)]
    monkeypatch.setattr(sf, "RULES", rules)
    assert lint(MODEL) == [("warning", "rule_failed", "", "lint rule broken_rule failed: KeyError: 'tp_size'",
                            "Report this to the collection's maintainers.")]


# ------------------------------------------------------------------------------------------------ the rules' context

def context(values=None, **kwargs):
    table = FlagTable(TABLE)
    by_id = {id(table.action(name)): value for name, value in (values or {}).items()}
    return sf.RuleContext((0, 5, 23), table, by_id, **kwargs)


def test_the_rule_context_defaults():
    ctx = context()
    assert ctx.ref("tp_size") == "sglang_server_args.tp_size"
    assert context(variable="").ref("tp_size") == "tp_size"
    assert ctx.choices("attention_backend") == ["fa3", "triton"]
    assert ctx.choices("tp_size") is None
    assert ctx.choices("no_such_option") is None
    wanted = {"severity": "error", "code": "c", "flag": "f", "message": "m", "hint": "", "source": "lint"}
    assert sf.RuleContext.error("c", "f", "m") == wanted
    assert sf.RuleContext.warning("c", "f", "m")["hint"] == ""
    assert sf.RuleContext.info("c", "f", "m")["hint"] == ""


@pytest.mark.parametrize("value, out", [(True, True), (False, False), (None, None), ("true", True), (" Yes ", True),
                                        ("off", False), ("0", False), (1, True), ("maybe", None)])
def test_fact_bool(value, out):
    assert context(facts={"nvlink": value}).fact_bool("nvlink") is out


def test_replacement_for_without_a_table_names_no_alias():
    assert sf.replacement_for("x_flag", (0, 5, 23), None, "y_dest") is None
    table = FlagTable(TABLE)
    assert sf.replacement_for("new_name", (0, 5, 23), table, "new_name") is None  # its own dest: no alias
