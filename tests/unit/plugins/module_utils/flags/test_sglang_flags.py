# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the launch-flag lint (plugins/module_utils/sglang_flags.py) against the bundled flag tables."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import findings
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import releases
from ansible_collections.gpufleet.sglang.plugins.module_utils import secrets
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import table as flag_table

ROOT = Path(__file__).resolve().parents[5]
TABLES = {path.stem: json.loads(path.read_text(encoding="utf-8"))
          for path in (ROOT / "data" / "sglang_flags").glob("*.json")}
HISTORY = flag_table.build_history(TABLES)
DATA = Path(__file__).resolve().parents[1] / "data" / "flags"
STORY = {k: v for k, v in json.loads((DATA / "story_relaunch.json").read_text()).items() if not k.startswith("_")}
MODEL = {"model_path": "/srv/models/m"}


def lint(args, release="0.5.23", facts=None, history="bundled"):
    table = TABLES[releases.select_table_release(release, TABLES)]
    return sf.lint_server_args(args, table, release, HISTORY if history == "bundled" else history, facts)


def only(result, code):
    found = [f for f in result.findings if f["code"] == code]
    assert len(found) == 1, (code, result.findings)
    return found[0]


def codes(result, severity=None):
    return sorted(f["code"] for f in result.findings if severity is None or f["severity"] == severity)


# ---------------------------------------------------------------------------------------------------------------------
# The acceptance story

@pytest.mark.parametrize("release", ["0.5.10", "0.5.11", "0.5.12"])
def test_story_relaunch_on_0_5_10_to_0_5_12_gives_the_language_only_error_with_its_fix(release):
    result = lint(STORY, release)
    assert [f["code"] for f in result.errors] == ["language_only_without_encoders"]
    error = result.errors[0]
    assert error["flag"] == "language_only"
    assert error["message"] == "requires at least one encoder urls to be set via --encoder-urls"
    assert "encoder_urls" in error["hint"] and "drop language_only" in error["hint"]
    # enforce_piecewise_cuda_graph is still a real flag there, but it skips SGLang's safety rules.
    assert only(result, "enforce_piecewise_cuda_graph")["severity"] == "warning"


def test_story_relaunch_on_0_5_23_reports_enforce_piecewise_as_removed_with_its_replacement():
    result = lint(STORY, "0.5.23")
    removed = only(result, "removed_flag")
    assert removed["severity"] == "error" and removed["flag"] == "enforce_piecewise_cuda_graph"
    assert "unrecognized arguments: --enforce-piecewise-cuda-graph" in removed["message"]
    assert "last in 0.5.19" in removed["message"]
    assert "cuda_graph_backend_prefill: breakable" in removed["hint"]
    # 0.5.13+ accept --language-only without encoders: a warning, not an error.
    assert only(result, "language_only_without_encoders")["severity"] == "warning"
    assert [f["code"] for f in result.errors] == ["removed_flag"]
    # Nothing else of the story is refused: the rest renders.
    assert result.config == {"enable-single-batch-overlap": True, "language-only": True,
                             "model-path": "/srv/models/Qwen3.6-27B", "speculative-algorithm": "NEXTN",
                             "speculative-num-steps": 3, "tp-size": 2}


def test_story_relaunch_without_history_still_names_the_replacement():
    """The module path may run without the history of other releases: the curated replacement still applies."""
    removed = only(lint(STORY, "0.5.23", history=None), "removed_flag")
    assert "cuda_graph_backend_prefill: breakable" in removed["hint"]


@pytest.mark.parametrize("release,code,severity", [
    ("0.5.13", "language_only_without_encoders", "warning"),
    ("0.5.14", "config_unsupported", "error"),  # a deprecated alias (DeprecatedStoreConstAction) from 0.5.14
    ("0.5.19", "config_unsupported", "error"),
    ("0.5.20", "removed_flag", "error"),
    ("0.5.21", "removed_flag", "error"),
])
def test_story_relaunch_per_release(release, code, severity):
    assert only(lint(STORY, release), code)["severity"] == severity


# ---------------------------------------------------------------------------------------------------------------------
# Keys

@pytest.mark.parametrize("key", ["tp_size", "tp-size", "--tp-size"])
def test_key_spellings_give_the_same_config(key):
    result = lint(dict(MODEL, **{key: 2}))
    assert result.errors == []
    assert result.config == {"model-path": "/srv/models/m", "tp-size": 2}


def test_old_release_renders_the_option_named_like_its_dest():
    # 0.5.10 registers ["--tensor-parallel-size", "--tp-size"] with dest tensor_parallel_size.
    result = lint(dict(MODEL, tp_size=2), "0.5.10")
    assert result.config["tensor-parallel-size"] == 2
    assert result.args["tp_size"] == 2


def test_abbreviation_is_refused_with_the_full_name():
    found = only(lint(dict(MODEL, tp=2)), "abbreviation")
    assert found["severity"] == "error"
    assert found["hint"] == "Write the full name: tp_size."


def test_ambiguous_prefix_quotes_argparse():
    found = only(lint(dict(MODEL, cuda_graph_max=8)), "ambiguous_flag")
    assert found["message"].startswith("ambiguous option: --cuda-graph-max could match --cuda-graph-max-bs-decode")


def test_unknown_flag_suggests_the_closest_names():
    found = only(lint(dict(MODEL, tp_sise=2)), "unknown_flag")
    assert found["message"] == "unrecognized arguments: --tp-sise"
    assert "tp_size" in found["hint"]


def test_upper_case_key_points_to_the_lower_case_name():
    assert only(lint(dict(MODEL, TP_SIZE=2)), "unknown_flag")["hint"] == "Did you mean tp_size?"


@pytest.mark.parametrize("key", [1, None, "", "tp_size=2", "-t", "tp size", "tp\nsize", "tp\x00", ("a",)])
def test_bad_keys_are_findings(key):
    result = lint({**MODEL, key: 2})
    assert codes(result, "error") == ["bad_key"]


def test_same_flag_twice_is_an_error():
    assert "duplicate_flag" in codes(lint(dict(MODEL, **{"tp_size": 2, "--tp-size": 2})), "error")
    assert "duplicate_flag" in codes(lint(dict(MODEL, tp_size=2, tensor_parallel_size=2)), "error")


def test_two_options_for_one_setting_conflict():
    # 0.5.14: --cuda-graph-max-bs is an alias of --cuda-graph-max-bs-decode (same dest).
    result = lint(dict(MODEL, cuda_graph_max_bs_decode=8, cuda_graph_max_bs=16), "0.5.14")
    assert "conflicting_flags" in codes(result, "error") or "config_unsupported" in codes(result, "error")


@pytest.mark.parametrize("key,code", [("config", "not_settable"), ("help", "not_settable"),
                                      ("model_type", "serve_only_flag")])
def test_options_the_config_file_cannot_carry(key, code):
    assert code in codes(lint(dict(MODEL, **{key: "x"})), "error")


# ---------------------------------------------------------------------------------------------------------------------
# Removed, renamed, deprecated, not yet added

def test_removed_cuda_graph_max_bs_points_to_the_decode_limit():
    found = only(lint(dict(MODEL, cuda_graph_max_bs=64)), "removed_flag")
    assert "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode" in found["message"]
    assert "cuda_graph_max_bs_decode" in found["hint"]


def test_cuda_graph_max_bs_is_a_plain_flag_before_0_5_14():
    assert lint(dict(MODEL, cuda_graph_max_bs=64), "0.5.12").errors == []


def test_alias_renames_are_derived_from_history():
    found = only(lint(dict(MODEL, nsa_decode_backend="fa3")), "removed_flag")
    assert "dsa_decode_backend" in found["hint"]


def test_flag_added_in_a_later_release():
    found = only(lint(dict(MODEL, attn_dp_size=2), "0.5.20"), "flag_not_in_release")
    assert "first in 0.5.22" in found["message"]


def test_deprecated_store_true_flag_is_a_warning():
    found = only(lint(dict(MODEL, enable_flashinfer_allreduce_fusion=True)), "deprecated_flag")
    assert found["severity"] == "warning"


def test_deprecated_disable_cuda_graph_cannot_go_in_the_config_file():
    found = only(lint(dict(MODEL, disable_cuda_graph=True)), "config_unsupported")
    assert "cuda_graph_backend_decode: disabled" in found["hint"]


def test_boolean_optional_action_cannot_go_in_the_config_file():
    found = only(lint(dict(MODEL, enable_tf32_matmul=True)), "config_unsupported")
    assert "BooleanOptionalAction" in found["message"]


def test_deprecated_dp_attention_points_to_attn_dp_size():
    found = only(lint(dict(MODEL, enable_dp_attention=True)), "config_unsupported")
    assert "attn_dp_size" in found["hint"]


def test_tc_piecewise_value_gets_sglangs_explanation():
    found = only(lint(dict(MODEL, cuda_graph_backend_prefill="tc_piecewise")), "invalid_choice")
    assert found["hint"] == "tc_piecewise was removed; select breakable, full, or disabled"
    assert lint(dict(MODEL, cuda_graph_backend_prefill="tc_piecewise"), "0.5.20").errors == []


def test_missing_model_path_quotes_argparse():
    found = only(lint({"tp_size": 2}), "missing_required")
    assert found["message"] == "the following arguments are required: --model-path/--model"


# ---------------------------------------------------------------------------------------------------------------------
# Values: every kind of bad input is a finding, never a traceback

@pytest.mark.parametrize("args,code,severity", [
    ({"tp_size": "two"}, "invalid_type", "error"),
    ({"tp_size": True}, "invalid_type", "error"),
    ({"tp_size": 2.0}, "invalid_type", "error"),
    ({"tp_size": "1e3"}, "invalid_type", "error"),
    ({"tp_size": "2"}, "coerced", "info"),
    ({"tp_size": 10 ** 30}, "value_out_of_range", "error"),
    ({"served_model_name": 10 ** 5000}, "value_out_of_range", "error"),
    ({"encoder_urls": ["http://a", 10 ** 5000]}, "value_out_of_range", "error"),
    ({"mem_fraction_static": -(10 ** 30)}, "value_out_of_range", "error"),
    ({"tp_size": [1, 2]}, "list_for_scalar", "error"),
    ({"tp_size": {"a": 1}}, "invalid_type", "error"),
    ({"tp_size": None}, "unset", "info"),
    ({"mem_fraction_static": "0.8"}, "coerced", "info"),
    ({"mem_fraction_static": float("nan")}, "value_not_finite", "error"),
    ({"mem_fraction_static": float("inf")}, "value_not_finite", "error"),
    ({"mem_fraction_static": "nan"}, "value_not_finite", "error"),
    ({"mem_fraction_static": False}, "invalid_type", "error"),
    ({"served_model_name": False}, "invalid_type", "error"),  # an unquoted `no` in YAML
    ({"served_model_name": 10}, "number_for_string", "warning"),  # an unquoted 012
    ({"served_model_name": "a\nb"}, "control_character", "error"),
    ({"served_model_name": "a\x00b"}, "control_character", "error"),
    ({"served_model_name": "a\u2028b"}, "control_character", "error"),
    ({"served_model_name": "x" * 5000}, "value_too_large", "error"),
    ({"served_model_name": "-x"}, "value_looks_like_option", "error"),
    ({"language_only": "yes"}, "expected_bool", "error"),  # the loader would pass '--language-only yes'
    ({"language_only": "false"}, "expected_bool", "error"),
    ({"language_only": 1}, "expected_bool", "error"),
    ({"language_only": "sure"}, "expected_bool", "error"),
    ({"cuda_graph_bs_decode": 8}, None, None),  # one value for nargs '+' is a one-item list
    ({"cuda_graph_bs_decode": []}, "empty_list", "info"),
    ({"cuda_graph_bs_decode": [1, [2]]}, "nested_list", "error"),
    ({"cuda_graph_bs_decode": [1, None]}, "null_in_list", "error"),
    ({"cuda_graph_bs_decode": [1, "x"]}, "invalid_type", "error"),
    ({"cuda_graph_bs_decode": list(range(5000))}, "value_too_large", "error"),
    ({"attention_backend": "flashinfo"}, "invalid_choice", "error"),
    ({"context_length": "32k"}, None, None),
    ({"context_length": "32q"}, "invalid_type", "error"),
    ({"preferred_sampling_params": {"temperature": 0.6}}, None, None),
    ({"preferred_sampling_params": "{not json"}, "invalid_type", "error"),
    ({"preferred_sampling_params": "[" * 100000}, "value_too_large", "error"),
    ({"forward_hooks": {"a": 1}}, "invalid_type", "error"),
    ({"forward_hooks": [{"name": "h", "target_modules": ["a"]}]}, None, None),
    ({"preferred_sampling_params": ["a"]}, None, None),
])
def test_value_checks(args, code, severity):
    result = lint(dict(MODEL, **args))
    if code is None:
        assert result.errors == [] and codes(result, "warning") == []
    else:
        found = only(result, code)
        assert found["severity"] == severity


def test_invalid_int_quotes_argparse():
    found = only(lint(dict(MODEL, tp_size="two")), "invalid_type")
    assert found["message"] == "argument --tp-size/--tensor-parallel-size: invalid int value: 'two'"


def test_yaml_boolean_for_a_string_says_to_quote_it():
    assert "quote" in only(lint(dict(MODEL, served_model_name=False)), "invalid_type")["hint"]


def test_choice_suggests_the_closest():
    assert only(lint(dict(MODEL, attention_backend="flashinfo")), "invalid_choice")["hint"] == \
        "Did you mean flashinfer?"


def test_json_option_is_rendered_as_a_compact_json_string():
    result = lint(dict(MODEL, preferred_sampling_params={"top_p": 0.9, "temperature": 0.6}))
    assert result.config["preferred-sampling-params"] == '{"temperature":0.6,"top_p":0.9}'
    pretty = lint(dict(MODEL, preferred_sampling_params='{\n  "temperature": 0.6\n}'))
    assert pretty.config["preferred-sampling-params"] == '{"temperature":0.6}'


def test_numeric_string_is_rendered_as_a_number():
    assert lint(dict(MODEL, tp_size="2")).config["tp-size"] == 2


def test_none_leaves_the_option_out():
    result = lint(dict(MODEL, tp_size=None))
    assert "tp-size" not in result.config and result.errors == []


@pytest.mark.parametrize("args", [None, {}, [], "tp_size=2", 3])
def test_args_that_are_not_a_dict(args):
    result = lint(args)
    if isinstance(args, dict) or args is None:
        assert codes(result, "error") == ["missing_required"]
    else:
        assert codes(result, "error") == ["args_not_a_dict"]


def test_random_input_never_raises():
    """Fuzz: any mix of keys and values gives findings, never an exception, and always renders."""
    from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config

    rng = random.Random(4)
    names = sorted({flag_table.option_name(o) for o in flag_table.FlagTable(TABLES["0.5.23"]).long_options})
    values = [None, True, False, 0, -1, 2 ** 70, 1.5, float("nan"), "", "no", "~", "1e3", "-x", "a\nb", "\x00",
              "é", [], [1, "a"], [[1]], {}, {"a": [1, {"b": None}]}, "0x1F", "012", ":", "#", " lead", 10 ** 400]
    keys = names + ["tp", "cuda_graph", "nope", "", "x y", "--", 7, None, "enforce-piecewise-cuda-graph"]
    for release in ("0.5.9", "0.5.12", "0.5.16", "0.5.23"):
        for dummy in range(300):
            args = {rng.choice(keys): rng.choice(values) for dummy in range(rng.randint(0, 8))}
            result = lint(args, release)
            render_server_config(result.config)
            for item in result.findings:
                assert set(item) == {"severity", "code", "flag", "message", "hint", "source"}


# ---------------------------------------------------------------------------------------------------------------------
# Secrets

def test_secrets_never_appear_in_findings_or_returned_args():
    secret = "s3cr3t-VALUE-42"
    result = lint(dict(MODEL, api_key=secret, admin_api_key=["x", secret], ssl_keyfile_password=secret,
                       served_model_name="name:" + secret, host="0.0.0.0"))
    dumped = json.dumps([result.findings, result.redacted_args(), result.redacted_config()])
    assert secret not in dumped
    assert result.redacted_args()["api_key"] == secrets.MASK
    assert result.config["api-key"] == secret  # the config file itself carries it


def test_secret_names_mask_any_key():
    table = TABLES["0.5.23"]
    result = sf.lint_server_args(dict(MODEL, served_model_name="private-name", tp_size="x"), table, "0.5.23",
                                 secret_names=["served_model_name", "--tp-size"])
    dumped = json.dumps([result.findings, result.redacted_args(), result.redacted_config()])
    assert "private-name" not in dumped and "'x'" not in dumped
    assert result.redacted_config()["served-model-name"] == secrets.MASK


@pytest.mark.parametrize("name,secret", [
    ("api_key", True), ("admin-api-key", True), ("--ssl-keyfile-password", True), ("hf_token", True),
    ("tokenizer_path", False), ("max_total_tokens", False), ("speculative_token_map", False), ("ssl_keyfile", False),
    ("bucket_time_to_first_token", False), ("token", True), ("db_secret", True),
])
def test_is_secret_name(name, secret):
    assert secrets.is_secret_name(name) is secret


def test_redact_text_masks_token_shapes():
    text = "pull with hf_abcdefghijklmnopqrstuvwx from https://bob:hunter2@example.com/x key sk-1234567890abcdefXYZ"
    assert secrets.redact(text) == "pull with ******** from https://********@example.com/x key ********"


# ---------------------------------------------------------------------------------------------------------------------
# Releases and tables

def test_select_table_release():
    assert releases.select_table_release("0.5.23", TABLES) == "0.5.23"
    assert releases.select_table_release("0.5.21", TABLES) == "0.5.20"
    assert releases.select_table_release("v0.5.16", TABLES) == "0.5.14"
    for outside in ("0.5.8", "0.5.24", "0.6.0", "1.0.0"):
        with pytest.raises(releases.ReleaseError):
            releases.select_table_release(outside, TABLES)
    for garbage in ("latest", "", None, 0.5, True):
        with pytest.raises(releases.ReleaseError):
            releases.select_table_release(garbage, TABLES)


def test_release_between_tables_adds_an_info_finding():
    assert only(lint(MODEL, "0.5.21"), "table_nearest_older")["severity"] == "info"
    assert only(lint(MODEL, "0.5.23.post1"), "table_nearest_older")["severity"] == "info"
    assert only(lint(MODEL, "0.5.023"), "release_normalised")["message"] == "SGLang 0.5.023 is linted as release 0.5.23"


@pytest.mark.parametrize("text,key", [("0.5.23", (0, 5, 23, 0)), ("v0.5.23", (0, 5, 23, 0)),
                                      ("0.5.23.post1", (0, 5, 23, 1)), (" 0.5.9 ", (0, 5, 9, 0))])
def test_release_strings_that_are_releases(text, key):
    assert releases.release_key(text) == key and releases.parse_release(text) == key[:3]


@pytest.mark.parametrize("text,says", [
    ("0.5.23foo", "'foo' follows the release number"),
    ("0.5.24rc1", "is a pre-release"),
    ("0.5.24a2", "is a pre-release"),
    ("0.5.24.dev3", "is a development build"),
    ("0.5.23+cu130", "carries a local version label (+cu130)"),
    ("0.5", "is not a release number such as '0.5.23'"),
    ("latest", "is not a release number such as '0.5.23'"),
])
def test_other_version_strings_are_refused_with_the_reason(text, says):
    with pytest.raises(releases.ReleaseError) as info:
        releases.parse_release(text)
    assert says in info.value.message and info.value.hint


def test_a_version_string_is_linted_only_when_mapped_explicitly():
    assert releases.map_release("0.5.24rc1", {"0.5.24rc1": "0.5.23"}) == ("0.5.23", "0.5.24rc1")
    assert releases.map_release("0.5.23", {"0.5.24rc1": "0.5.23"}) == ("0.5.23", None)
    with pytest.raises(releases.ReleaseError) as info:
        releases.map_release("0.5.24rc1", {})
    assert "sglang_server_release_map: {'0.5.24rc1': '0.5.23'}" in info.value.hint
    with pytest.raises(releases.ReleaseError) as info:
        releases.map_release("0.5.24rc1", {"0.5.24rc1": "soon"})
    assert info.value.message == "sglang_server_release_map maps '0.5.24rc1' to 'soon', which is not a release number " \
                                 "such as '0.5.23'"
    assert codes(sf.lint_server_args(MODEL, TABLES["0.5.23"], "0.5.23foo"), "error") == ["release_invalid"]


def test_rules_of_the_nearest_release_are_said():
    result = sf.lint_server_args(MODEL, dict(TABLES["0.5.23"], sglang_version="0.5.25"), "0.5.25",
                                 rules_release="0.5.23")
    found = only(result, "rules_from_nearest_release")
    assert found["severity"] == "info" and "those of SGLang 0.5.23" in found["message"]
    assert releases.nearest_known((0, 5, 25), TABLES) == "0.5.23"
    assert releases.nearest_known((0, 5, 21), TABLES) == "0.5.20"


@pytest.mark.parametrize("word,expected", [
    ("tp_sise", ["tp_size"]), ("TP_SIZE", ["tp_size"]), ("tp-size", ["tp_size"]),
    ("mem_fraction_statc", ["mem_fraction_static"]),
    ("gpu_memory_utilization", []), ("model_name", []), ("attention", []), ("contxt_length", ["context_length"]),
])
def test_did_you_mean_only_for_near_typos(word, expected):
    names = sorted({flag_table.option_name(o) for a in TABLES["0.5.23"]["actions"] for o in a["opts"]
                    if o.startswith("--")})
    assert findings.close_matches(word, names) == expected


def test_unknown_flag_without_a_close_name_gets_no_guess():
    found = only(lint(dict(MODEL, gpu_memory_utilization=0.9)), "unknown_flag")
    assert found["hint"] == "Drop it, or see `sglang serve --help` of SGLang 0.5.23 for the option names."


def test_every_type_error_has_a_fix():
    bad = {"tp_size": "two", "mem_fraction_static": "lots", "context_length": 1.5, "served_model_name": True,
           "cuda_graph_bs_decode": ["x"], "preferred_sampling_params": "{no", "json_model_override_args": "[1]",
           "model_loader_extra_config": 3, "max_total_tokens": False, "language_only": "maybe",
           "port": [1, 2], "cuda_graph_config": [1], "chunked_prefill_size": "1e3", "attention_backend": "nope"}
    result = lint(dict(MODEL, **bad))
    assert sorted({f["flag"] for f in result.errors}) == sorted(bad)
    for item in result.errors:
        assert item["hint"], item
        assert "sglang_server_args." + item["flag"] in item["hint"], item


def test_table_newer_than_release_is_an_error():
    result = sf.lint_server_args(MODEL, TABLES["0.5.23"], "0.5.20")
    assert "table_newer_than_release" in codes(result, "error")


def test_invalid_release_is_a_finding():
    assert codes(sf.lint_server_args(MODEL, TABLES["0.5.23"], "next"), "error") == ["release_invalid"]


@pytest.mark.parametrize("table", [None, {}, {"actions": "x"}, {"actions": [{"opts": "x"}]}, []])
def test_bad_table_raises_a_clear_error(table):
    with pytest.raises(flag_table.FlagTableError):
        sf.lint_server_args(MODEL, table, "0.5.23")


def test_every_bundled_table_loads_and_lints_a_minimal_config():
    for release, table in TABLES.items():
        result = sf.lint_server_args(MODEL, table, release, HISTORY)
        assert result.errors == [], release
        assert result.table_release == release


def test_history_lists_releases_oldest_first():
    entries = HISTORY["--enforce-piecewise-cuda-graph"]
    assert [e[0] for e in entries] == ["0.5.10", "0.5.12", "0.5.14", "0.5.18", "0.5.19"]
    assert entries[-1][1:] == ["cuda_graph_backend_prefill", "DeprecatedStoreConstAction", True]
    assert set(flag_table.build_history(TABLES, ["--tp-size"])) == {"--tp-size"}


def test_findings_are_sorted_errors_first_and_deterministic():
    args = dict(STORY, host="0.0.0.0", tp_sise=1)
    first, second = lint(args), lint(dict(reversed(list(args.items()))))
    assert first.findings == second.findings
    ranks = [findings.SEVERITIES.index(f["severity"]) for f in first.findings]
    assert ranks == sorted(ranks)


def test_a_failing_rule_is_reported_not_raised(monkeypatch):
    from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import rules

    def broken(ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(sf, "RULES", [rules.Rule("broken", None, None, (), broken)])
    found = only(lint(MODEL), "rule_failed")
    assert found["severity"] == "warning" and "boom" in found["message"]


def test_finding_rejects_unknown_severity():
    with pytest.raises(ValueError):
        findings.finding("fatal", "x", None, "y")


def test_json_model_override_args_takes_a_mapping_and_checks_a_string_as_json():
    mapping = lint(dict(MODEL, json_model_override_args={"rope_theta": 1000000, "architectures": ["X"]}))
    assert mapping.errors == []
    assert mapping.config["json-model-override-args"] == '{"architectures":["X"],"rope_theta":1000000}'
    text = lint(dict(MODEL, json_model_override_args='{"rope_theta": 1000000}'))
    assert text.config["json-model-override-args"] == '{"rope_theta":1000000}'
    bad = only(lint(dict(MODEL, json_model_override_args="{bad")), "invalid_json")
    assert bad["message"].startswith("argument --json-model-override-args: the value is not JSON (Expecting property "
                                     "name enclosed in double quotes")
    assert "sglang_server_args.json_model_override_args a YAML mapping" in bad["hint"]
    assert only(lint(dict(MODEL, json_model_override_args="[1, 2]")), "invalid_json")["message"].endswith(
        "the value is JSON but not an object: '[1, 2]'")
    assert codes(lint(dict(MODEL, json_model_override_args=[1, 2])), "error") == ["invalid_type"]
    assert codes(lint(dict(MODEL, model_loader_extra_config={"enable_multithread_load": True})), "error") == []
