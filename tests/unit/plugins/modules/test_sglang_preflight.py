# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sglang_preflight module's main paths, with a tiny fake SGLang venv for the real-parser check.

The fake (written into tmp_path) is just enough of ``sglang.srt.server_args.prepare_server_args``: an argparse
parser with prog "sglang serve", SGLang's --config loader (each key becomes ``--<key>``), a hang before argparse
for the timeout test, and one after it that the parse-only check must never reach. The lead's integration test
runs the same path against the collection's SGLang stand-in.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.module_utils import secrets
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import table as flag_table
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config
from ansible_collections.gpufleet.sglang.plugins.modules import sglang_preflight

ROOT = Path(__file__).resolve().parents[4]
TABLES = {path.stem: json.loads(path.read_text(encoding="utf-8"))
          for path in (ROOT / "data" / "sglang_flags").glob("*.json")}
TABLE = dict(TABLES["0.5.23"], history=flag_table.build_history(TABLES, ["--enforce-piecewise-cuda-graph"]))
SECRET = "sk-test-SECRET-0123456789"

FAKE_SERVER_ARGS = textwrap.dedent("""\
    import argparse
    import sys
    import time

    import yaml


    def _merge_config(argv):
        if "--config" not in argv:
            return argv
        index = argv.index("--config")
        with open(argv[index + 1]) as handle:
            data = yaml.safe_load(handle) or {}
        if data.get("model-path") == "/hang":  # a hung import or loader, before argparse
            time.sleep(600)
        extra = []
        for key, value in data.items():
            if key == "boom":
                raise ValueError("Unsupported config option 'boom' with action 'BooleanOptionalAction'")
            if isinstance(value, bool):
                extra += ["--" + key] if value else []
            elif isinstance(value, list):
                extra += ["--" + key] + [str(v) for v in value]
            else:
                extra += ["--" + key, str(value)]
        return extra + argv[:index] + argv[index + 2:]


    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path", "--model", required=True)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
        parser.add_argument("--language-only", action="store_true")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=30000)
        parser.add_argument("--api-key")
        parser.add_argument("--config")
        args = parser.parse_args(_merge_config(argv))
        time.sleep(600)  # resolution, which the parse-only check must never reach
        return args
    """)


@pytest.fixture(name="venv")
def fake_venv(tmp_path):
    """A directory shaped like a venv whose python imports the fake sglang (version 0.5.23)."""
    site = tmp_path / "site"
    (site / "sglang" / "srt").mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text("")
    (site / "sglang" / "srt" / "__init__.py").write_text("")
    (site / "sglang" / "srt" / "server_args.py").write_text(FAKE_SERVER_ARGS)
    (site / "sglang-0.5.23.dist-info").mkdir()
    (site / "sglang-0.5.23.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\n"
                                                               "Version: 0.5.23\n")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text('#!/bin/sh\nPYTHONPATH="%s" exec "%s" "$@"\n' % (site, sys.executable))
    python.chmod(0o755)
    return str(venv)


@pytest.fixture(name="run")
def module_runner(tmp_path, capsys):
    workdir = tmp_path / "ansible-tmp"
    workdir.mkdir()

    def run(check_mode=False, diff=False, **params):
        params.setdefault("sglang_version", "0.5.23")
        params.setdefault("flag_table", TABLE)
        params.update(_ansible_check_mode=check_mode, _ansible_diff=diff, _ansible_tmpdir=str(workdir),
                      _ansible_remote_tmp=str(workdir), _ansible_keep_remote_files=True)
        with patch_module_args(params):
            with pytest.raises(SystemExit):
                sglang_preflight.main()
        out = capsys.readouterr().out
        return json.loads(out), out

    return run


def clean_args(**extra):
    return dict({"model_path": "/srv/models/m", "tp_size": 2}, **extra)


def test_writes_the_config_once_then_leaves_it_alone(run, venv, tmp_path):
    dest = tmp_path / "etc" / "default.yaml"
    dest.parent.mkdir()
    result, out = run(server_args=clean_args(host="0.0.0.0"), secret_args={"api_key": SECRET}, venv=venv,
                      dest=str(dest))
    # /srv/models/m is not on this machine: the model checks and SGLang's resolution were skipped, and it says so.
    notes = [(f["code"], f["severity"]) for f in result["findings"]]
    assert notes == [("resolution_skipped", "info"), ("model_config_unknown", "info")]
    assert result["parser"]["mode"] == "parse" and "/srv/models/m does not exist yet" in result["parser"]["resolve_skipped"]
    assert result["changed"] is True and result["written"] is True and not result.get("failed")
    assert result["parser"]["ran"] and result["parser"]["rc"] == 0
    assert result["parser"]["sglang_version"] == "0.5.23"
    text = dest.read_text()
    assert text == render_server_config({"api-key": SECRET, "host": "0.0.0.0", "model-path": "/srv/models/m",
                                         "tp-size": 2})
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o640
    assert SECRET not in out and result["args"]["api_key"] == secrets.MASK

    again, dummy = run(server_args=clean_args(host="0.0.0.0"), secret_args={"api_key": SECRET}, venv=venv,
                       dest=str(dest))
    assert again["changed"] is False and again["written"] is False
    assert dest.read_text() == text and again["config_sha256"] == result["config_sha256"]


def test_mode_drift_is_repaired(run, tmp_path):
    dest = tmp_path / "default.yaml"
    run(server_args=clean_args(), dest=str(dest))
    dest.chmod(0o644)
    result, dummy = run(server_args=clean_args(), dest=str(dest))
    assert result["changed"] is True and result["written"] is False
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o640


def test_check_mode_and_diff_write_nothing_and_mask_secrets(run, venv, tmp_path):
    dest = tmp_path / "default.yaml"
    dest.write_text("# old\napi-key: OLDSECRET-abcdef\ntp-size: 1\n")
    result, out = run(check_mode=True, diff=True, server_args=clean_args(api_key=SECRET), venv=venv, dest=str(dest))
    assert result["changed"] is True and result["written"] is True
    assert dest.read_text() == "# old\napi-key: OLDSECRET-abcdef\ntp-size: 1\n"
    assert result["diff"]["before"] == "# old\napi-key: ********\ntp-size: 1\n"
    assert "api-key: '********'" in result["diff"]["after"]
    assert SECRET not in out and "OLDSECRET" not in out
    assert result["parser"]["rc"] == 0  # the parse-only check runs in check mode too


def test_lint_errors_fail_with_every_error_and_leave_the_file(run, venv, tmp_path):
    dest = tmp_path / "default.yaml"
    story = clean_args(enforce_piecewise_cuda_graph=True, tp="2", attention_backend="nope")
    del story["tp_size"]
    result, dummy = run(server_args=story, venv=venv, dest=str(dest))
    assert result["failed"] is True and result["written"] is False and not dest.exists()
    for flag in ("enforce_piecewise_cuda_graph", "tp:", "attention_backend"):
        assert flag in result["msg"]
    assert "left unchanged because of the errors" in result["msg"]


def test_parser_refusal_is_merged_into_the_same_report(run, venv):
    # The lint knows enable_single_batch_overlap (0.5.23 has it); the installed fake SGLang does not.
    result, dummy = run(server_args=clean_args(enable_single_batch_overlap=True), venv=venv)
    assert result["failed"] is True
    assert [(f["code"], f["flag"], f["source"]) for f in result["findings"] if f["severity"] == "error"] == \
        [("parser_unrecognized", "enable_single_batch_overlap", "parser")]
    assert result["parser"]["error"] == "sglang serve: error: unrecognized arguments: --enable-single-batch-overlap"


def test_parser_exception_is_reported(run, venv, tmp_path):
    table = json.loads(json.dumps(TABLE))
    table["actions"].append({"opts": ["--boom"], "dest": "boom", "default": False, "type": None, "choices": None,
                             "nargs": 0, "action": "_StoreTrueAction", "required": False, "deprecated": False})
    result, dummy = run(server_args=clean_args(boom=True), venv=venv, flag_table=table)
    errors = [(f["code"], f["flag"]) for f in result["findings"] if f["severity"] == "error"]
    assert errors == [("parser_refused", "boom")]


def test_parser_timeout(run, venv):
    result, dummy = run(server_args={"model_path": "/hang"}, venv=venv, parser_timeout=2)
    assert [f["code"] for f in result["findings"] if f["severity"] == "error"] == ["parser_timeout"]
    assert result["parser"]["seconds"] < 30


def test_missing_venv(run, tmp_path):
    result, dummy = run(server_args=clean_args(), venv=str(tmp_path / "nowhere"))
    assert [f["code"] for f in result["findings"] if f["source"] != "lint"] == ["parser_unavailable"]
    assert result["failed"]
    result, dummy = run(check_mode=True, server_args=clean_args(), venv=str(tmp_path / "nowhere"))
    assert [f["code"] for f in result["findings"] if f["source"] != "lint"] == ["parser_skipped"]
    assert not result.get("failed")


def test_version_mismatch_between_lint_and_venv(run, venv):
    table = dict(TABLES["0.5.22"])
    result, dummy = run(server_args=clean_args(), venv=venv, sglang_version="0.5.22", flag_table=table)
    assert [f["code"] for f in result["findings"] if f["severity"] == "error"] == ["version_mismatch"]


def test_without_a_table_the_module_says_how_to_run_it(run):
    result, dummy = run(server_args=clean_args(), flag_table=None)
    assert result["failed"] and "action plugin" in result["msg"]


def test_bad_table(run):
    result, dummy = run(server_args=clean_args(), flag_table={"actions": "nope"})
    assert result["failed"] and result["msg"].startswith("flag_table is not a flag table")


def test_missing_directory(run, tmp_path):
    result, dummy = run(server_args=clean_args(), dest=str(tmp_path / "no" / "such" / "x.yaml"))
    assert result["failed"] and "does not exist" in result["msg"]


def test_fail_on_never_reports_without_failing(run):
    result, dummy = run(server_args={"tp_size": "x"}, fail_on="never")
    assert not result.get("failed") and result["summary"]["error"] == 2


def test_redact_config_text():
    text = "api-key: abc\nadmin_api_key: 'x y'\ntp-size: 2\nurl: https://u:p@h/\n"
    assert sglang_preflight.redact_config_text(text, ["abc"]) == \
        "api-key: ********\nadmin_api_key: ********\ntp-size: 2\nurl: https://********@h/\n"


# ---------------------------------------------------------------------------------------------------------------------
# The host check with the model on the host: SGLang's resolution, and the day-one dump

RESOLVING_SERVER_ARGS = textwrap.dedent("""\
    import argparse
    import json
    import os

    import yaml


    class ServerArgs:
        def __init__(self, ns):
            self.ns = ns

        def resolve_once(self):
            with open(os.path.join(self.ns.model_path, "config.json")) as handle:
                arch = json.load(handle)["architectures"][0]
            if self.ns.language_only and "VL" not in arch:
                raise ValueError("Model type %s is not supported for encoder disaggregation." % arch)
            if self.ns.device != "cuda":
                raise RuntimeError("No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) or platform plugin is available.")

        def check_server_args(self):
            assert os.environ.get("HF_HUB_OFFLINE") == "1", "the host check must run offline"


    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path", "--model", required=True)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
        parser.add_argument("--language-only", action="store_true")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--device")
        parser.add_argument("--config")
        if "--config" in argv:
            index = argv.index("--config")
            with open(argv[index + 1]) as handle:
                data = yaml.safe_load(handle) or {}
            extra = []
            for key, value in data.items():
                if isinstance(value, bool):
                    extra += ["--" + key] if value else []
                else:
                    extra += ["--" + key, str(value)]
            argv = extra + argv[:index] + argv[index + 2:]
        return ServerArgs(parser.parse_args(argv))
    """)


@pytest.fixture(name="resolving_venv")
def fake_resolving_venv(venv):
    """The fake venv, with a server_args that resolves (reads the model's config.json) and checks."""
    site = Path(venv).parent / "site"
    (site / "sglang" / "srt" / "server_args.py").write_text(RESOLVING_SERVER_ARGS)
    return venv


def model_dir(tmp_path, name="text", arch="Qwen2ForCausalLM", heads=14):
    folder = tmp_path / "models" / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"architectures": [arch], "num_attention_heads": heads,
                                                    "num_key_value_heads": 2, "max_position_embeddings": 32768}))
    return str(folder)


def test_resolution_runs_when_the_model_is_on_the_host(run, resolving_venv, tmp_path):
    result, dummy = run(server_args={"model_path": model_dir(tmp_path)}, venv=resolving_venv)
    assert result["findings"] == [] and not result.get("failed")
    assert result["parser"]["mode"] == "resolve" and result["parser"]["resolved"] is True
    assert result["parser"]["device_added"] is True  # no torch in this venv: resolution got --device cuda


def test_a_resolution_refusal_fails_the_task(run, resolving_venv, tmp_path):
    result, dummy = run(server_args={"model_path": model_dir(tmp_path, "t2", arch="LlamaForCausalLM"),
                                     "language_only": True}, venv=resolving_venv,
                        model_config={"architectures": ["Qwen2VLForConditionalGeneration"]})
    # model_config says multimodal (so the lint lets it through); SGLang on the host reads the real file.
    assert result["failed"] is True
    assert [(f["code"], f["source"]) for f in result["findings"] if f["severity"] == "error"] == \
        [("host_check_refused", "host")]
    assert "host_check_refused: ValueError: Model type LlamaForCausalLM is not supported" in result["msg"]


def test_the_lint_on_the_target_reads_the_model_config(run, resolving_venv, tmp_path):
    result, dummy = run(server_args={"model_path": model_dir(tmp_path), "tp_size": 4}, venv=resolving_venv)
    assert [f["code"] for f in result["findings"] if f["severity"] == "error"] == ["tp_not_dividing_heads"]
    assert "sglang_server_args.tp_size: the model has 14 attention heads" in result["msg"]
    assert result["parser"]["mode"] == "parse"  # resolution waits until the lint is clean


def test_the_model_is_found_in_the_hub_cache_of_the_service_env(run, resolving_venv, tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "hub" / "models--Qwen--Qwen2-0.5B"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"],
                                                                         "num_attention_heads": 14}))
    result, dummy = run(server_args={"model_path": "Qwen/Qwen2-0.5B", "tp_size": 4},
                        service_env={"HF_HOME": str(tmp_path / "hf")})
    assert [f["code"] for f in result["findings"] if f["severity"] == "error"] == ["tp_not_dividing_heads"]


def test_open_host_without_api_key_fails_unless_allowed(run):
    result, dummy = run(server_args=clean_args(host="0.0.0.0"))
    assert result["failed"] and [f["code"] for f in result["findings"] if f["severity"] == "error"] == \
        ["open_without_api_key"]
    result, dummy = run(server_args=clean_args(host="0.0.0.0"), allow_open_without_api_key=True)
    assert not result.get("failed") and "warning: sglang_server_args.host: SGLang listens on 0.0.0.0" in result["msg"]


def test_messages_name_the_variable_given(run):
    result, dummy = run(server_args=clean_args(tp_size="x"), variable="sglang_server_instances[main].args")
    assert "sglang_server_instances[main].args.tp_size: argument --tp-size/--tensor-parallel-size: invalid int value" \
        in result["msg"]


def test_dump_mode_returns_the_venvs_flag_table(run, resolving_venv):
    result, dummy = run(server_args={}, venv=resolving_venv, dump_table=True, flag_table=None)
    table = result["flag_table"]
    assert result["sglang_version"] == table["sglang_version"] == "0.5.23" and not result["changed"]
    assert [row["opts"] for row in table["actions"]] == [
        ["--config"], ["--device"], ["--host"], ["--language-only"], ["--model-path", "--model"],
        ["--tp-size", "--tensor-parallel-size"], ["-h", "--help"]]


def test_a_pre_release_is_refused_unless_mapped(run):
    result, dummy = run(server_args=clean_args(), sglang_version="0.5.24rc1")
    assert result["failed"] and [f["code"] for f in result["findings"]] == ["release_unsupported"]
    assert "sglang_server_release_map" in result["msg"]
    result, dummy = run(server_args=clean_args(), sglang_version="0.5.24rc1", release_map={"0.5.24rc1": "0.5.23"})
    assert not result.get("failed") and result["sglang_version"] == "0.5.23"
