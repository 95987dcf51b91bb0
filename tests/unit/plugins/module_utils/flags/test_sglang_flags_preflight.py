# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight glue: secrets split, the real-parser output read into findings, the verdict and the result."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import findings
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import releases
from ansible_collections.gpufleet.sglang.plugins.module_utils import secrets
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import preflight as pf

ROOT = Path(__file__).resolve().parents[5]
TABLE = json.loads((ROOT / "data" / "sglang_flags" / "0.5.23.json").read_text(encoding="utf-8"))
MODEL = {"model_path": "/srv/models/m"}

USAGE = "usage: sglang serve [-h] --model-path MODEL_PATH [--tp-size TP_SIZE]\n"


def test_split_and_merge_secret_args():
    plain, secret = secrets.split_secret_args({"tp_size": 2, "api_key": "k", "ssl_keyfile_password": "p"})
    assert plain == {"tp_size": 2}
    assert secret == {"api_key": "k", "ssl_keyfile_password": "p"}
    assert pf.merge_secret_args(plain, secret) == {"tp_size": 2, "api_key": "k", "ssl_keyfile_password": "p"}
    assert secrets.split_secret_args("not a dict") == ("not a dict", {})
    assert pf.merge_secret_args(plain, {}) is plain


def test_parser_command_is_bounded():
    command = pf.parser_command("/v/bin/python", "cfg/x.yaml", 30, "/usr/bin/timeout")
    assert command[:3] == ["/usr/bin/timeout", "--kill-after=5", "35"]
    assert command[3:5] == ["/v/bin/python", "-c"] and command[-4:] == ["30", "parse", "--config", "cfg/x.yaml"]
    assert pf.parser_command("/v/bin/python", "/c.yaml", 0)[0] == "/v/bin/python"
    resolve = pf.parser_command("/v/bin/python", "/c.yaml", 9, mode="resolve")
    assert resolve[-4:] == ["9", "resolve", "--config", "/c.yaml"]


def test_parse_only_script_is_valid_python():
    compile(pf.PARSE_ONLY_SCRIPT, "<parse-only>", "exec")


def test_success_reports_the_installed_version():
    findings, info = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.23\nGPUFLEET_PARSE_OK\n", "", 6.2, 60,
                                             "0.5.23")
    assert findings == []
    assert info == {"ran": True, "rc": 0, "seconds": 6.2, "error": "", "sglang_version": "0.5.23", "resolved": None,
                    "device_added": False}


def test_version_mismatch_is_an_error():
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.22\n", "", 1, 60, "0.5.23")
    assert [(f["code"], f["severity"], f["source"]) for f in findings] == [("version_mismatch", "error", "parser")]
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.23.post1\n", "", 1, 60, "0.5.23")
    assert findings == []
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.24rc1\n", "", 1, 60, "0.5.23")
    assert [f["code"] for f in findings] == ["version_mismatch"] and "pre-release" in findings[0]["message"]
    assert "sglang_server_release_map" in findings[0]["hint"]
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.24rc1\n", "", 1, 60, "0.5.23",
                                              {"0.5.24rc1": "0.5.23"})
    assert findings == []


def test_unrecognized_arguments_give_one_finding_per_flag():
    stderr = USAGE + "sglang serve: error: unrecognized arguments: --enforce-piecewise-cuda-graph --foo-bar 3\n"
    findings, info = pf.interpret_parser_run(2, "", stderr, 7.0, 60)
    assert [(f["code"], f["flag"]) for f in findings] == [("parser_unrecognized", "enforce_piecewise_cuda_graph"),
                                                          ("parser_unrecognized", "foo_bar")]
    assert info["error"] == ("sglang serve: error: unrecognized arguments: --enforce-piecewise-cuda-graph "
                             "--foo-bar 3")


def test_stray_value_is_reported():
    findings, dummy = pf.interpret_parser_run(2, "", USAGE + "sglang serve: error: unrecognized arguments: true\n", 1, 60)
    assert [(f["code"], f["flag"]) for f in findings] == [("parser_refused", "")]


@pytest.mark.parametrize("line,code,flag", [
    ("sglang serve: error: argument --tp-size/--tensor-parallel-size: invalid int value: 'two'",
     "parser_refused", "tp_size"),
    ("sglang serve: error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
     "--cuda-graph-max-bs-prefill", "parser_refused", "cuda_graph_max_bs"),
    ("sglang serve: error: the following arguments are required: --model-path/--model",
     "parser_missing_required", "model_path"),
    ("-c: error: argument --attention-backend: invalid choice: 'x' (choose from 'fa3', 'triton')",
     "parser_refused", "attention_backend"),
])
def test_argparse_errors(line, code, flag):
    findings, info = pf.interpret_parser_run(2, "", USAGE + line + "\n", 1, 60)
    assert [(f["code"], f["flag"]) for f in findings] == [(code, flag)]
    assert findings[0]["message"] == line.split(": error: ", 1)[1]
    assert info["error"] == line


def test_config_loader_exception_is_read_from_the_traceback():
    stderr = textwrap.dedent("""\
        Traceback (most recent call last):
          File "<string>", line 20, in <module>
          File "/v/lib/python3.12/site-packages/sglang/srt/utils/server_args_config_parser.py", line 120, in x
            raise ValueError(msg)
        ValueError: Unsupported config option 'enable_tf32_matmul' with action 'BooleanOptionalAction'
        """)
    findings, dummy = pf.interpret_parser_run(1, "", stderr, 1, 60)
    assert [(f["code"], f["flag"]) for f in findings] == [("parser_refused", "enable_tf32_matmul")]
    assert findings[0]["message"].startswith("ValueError: Unsupported config option")


def test_missing_sglang_is_parser_unavailable():
    stderr = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'sglang'\n"
    findings, dummy = pf.interpret_parser_run(1, "", stderr, 0.1, 60)
    assert [f["code"] for f in findings] == ["parser_unavailable"]


@pytest.mark.parametrize("rc,seconds", [(124, 65.0), (-14, 60.0), (142, 60.0), (137, 65.0), (-9, 61.0)])
def test_timeouts(rc, seconds):
    findings, info = pf.interpret_parser_run(rc, "", "", seconds, 60)
    assert [f["code"] for f in findings] == ["parser_timeout"]
    assert info["error"] == "timed out after 60 s"


def test_sigkill_before_the_deadline_is_a_crash():
    findings, dummy = pf.interpret_parser_run(-9, "", "", 3.0, 60)
    assert [f["code"] for f in findings] == ["parser_crashed"] and "OOM" in findings[0]["hint"]


def test_unexplained_failure_is_a_crash_with_a_hint():
    findings, dummy = pf.interpret_parser_run(3, "", "something odd\n", 1, 60)
    assert [f["code"] for f in findings] == ["parser_crashed"]
    assert "docs/preflight.md#host-check" in findings[0]["hint"]


def test_parser_output_is_redacted():
    stderr = "sglang serve: error: argument --model-path: invalid value: 'hf_abcdefghijklmnopqrstuv'\n"
    findings, info = pf.interpret_parser_run(2, "", stderr, 1, 60)
    assert "hf_abc" not in json.dumps([findings, info])


def test_verdict_lists_every_error_and_honours_fail_on():
    errors = [findings.finding("error", "a", "x", "bad x", "fix x"), findings.finding("error", "b", "y", "bad y")]
    warning = [findings.finding("warning", "c", "z", "odd z", "fix z")]
    failed, msg = pf.verdict(errors + warning, "error", "0.5.23")
    assert failed and msg == ("SGLang 0.5.23 would not run these launch flags as intended (2 errors, 1 warning, 0 info). "
                              "sglang_server_args.x: bad x (fix: fix x) | sglang_server_args.y: bad y | "
                              "warning: sglang_server_args.z: odd z (fix: fix z)")
    failed, msg = pf.verdict(warning, "warning", "0.5.23")
    assert failed and "sglang_server_args.z: odd z" in msg
    failed, msg = pf.verdict(errors, "never", "0.5.23")
    assert not failed and "bad x" in msg
    # Warnings' text is in msg even when nothing fails; infos stay in the report.
    info = [findings.finding("info", "d", "w", "note w")]
    assert pf.verdict(warning + info, "error", "0.5.23") == (
        False, "SGLang 0.5.23 launch flags: 0 errors, 1 warning, 1 info. warning: sglang_server_args.z: odd z "
               "(fix: fix z)")
    assert pf.verdict(info, "error", "0.5.23", "sglang_server_instances[main].args") == (
        False, "SGLang 0.5.23 launch flags: 0 errors, 0 warnings, 1 info")
    assert pf.report_lines(errors[:1], "sglang_server_instances[main].args") == [
        "ERROR sglang_server_instances[main].args.x: bad x -- fix: fix x"]


def test_build_result_merges_and_never_returns_secrets():
    lint = sf.lint_server_args(dict(MODEL, api_key="TOPSECRET", tp_sise=2), TABLE, "0.5.23")
    parser_findings, parser_info = pf.interpret_parser_run(
        2, "", USAGE + "sglang serve: error: unrecognized arguments: --tp-sise 2\n", 6.0, 60, "0.5.23")
    result = pf.build_result(lint, parser_findings, parser_info)
    assert result["failed"] is True
    assert [(f["code"], f["source"]) for f in result["findings"]] == [("unknown_flag", "lint"),
                                                                      ("parser_unrecognized", "parser")]
    assert result["summary"] == {"error": 2, "warning": 0, "info": 0}
    assert result["args"]["api_key"] == secrets.MASK and "api-key: '********'" in result["config"]
    assert "TOPSECRET" not in json.dumps(result)
    assert result["report"][0] == ("ERROR sglang_server_args.tp_sise: unrecognized arguments: --tp-sise -- fix: "
                                   "Did you mean tp_size?")


def test_release_error_result():
    with pytest.raises(releases.ReleaseError) as info:
        releases.select_table_release("0.9.0", ["0.5.23"])
    result = pf.release_error_result(info.value, "0.9.0")
    assert result["failed"] and result["findings"][0]["code"] == "release_unsupported"
    assert "sglang_server_flag_tables_dir" in result["msg"]


def test_parse_only_script_stops_after_argparse(tmp_path):
    """The script against a tiny fake sglang: argparse runs, the rest of prepare_server_args does not."""
    package = tmp_path / "sglang" / "srt"
    package.mkdir(parents=True)
    (tmp_path / "sglang" / "__init__.py").write_text('__version__ = "0.5.23"\n')  # no dist-info: like the stand-in
    (package / "__init__.py").write_text("")
    (package / "server_args.py").write_text(textwrap.dedent("""\
        import argparse

        def prepare_server_args(argv):
            parser = argparse.ArgumentParser(prog="sglang serve")
            parser.add_argument("--model-path", required=True)
            parser.add_argument("--config")
            parser.parse_args(argv)
            raise RuntimeError("resolution would need the GPU")
        """))
    config = tmp_path / "c.yaml"
    config.write_text("model-path: /m\n")

    def run(*args):
        return subprocess.run([sys.executable, "-c", pf.HOST_CHECK_SCRIPT, "20", "parse"] + list(args), cwd=tmp_path,
                              env={"PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, check=False,
                              timeout=60)

    ok = run("--model-path", "/m")
    assert ok.returncode == 0 and pf.PARSE_OK_MARKER in ok.stdout
    assert "GPUFLEET_SGLANG_VERSION=0.5.23" in ok.stdout
    bad = run("--model-path", "/m", "--nope")
    findings, dummy = pf.interpret_parser_run(bad.returncode, bad.stdout, bad.stderr, 1, 20)
    assert [(f["code"], f["flag"]) for f in findings] == [("parser_unrecognized", "nope")]


RESOLVING_FAKE = textwrap.dedent("""\
    import argparse

    class ServerArgs:
        def __init__(self, ns):
            self.ns = ns
            self.resolved = False

        def resolve_once(self):
            if self.ns.language_only:
                raise ValueError("Model type Qwen2ForCausalLM is not supported for encoder disaggregation.")
            if self.ns.device != "cuda":
                raise RuntimeError("No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) or platform plugin is available.")
            self.resolved = True

        def check_server_args(self):
            assert self.resolved
            assert self.ns.tp_size != 3

    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path", required=True)
        parser.add_argument("--tp-size", type=int, default=1)
        parser.add_argument("--language-only", action="store_true")
        parser.add_argument("--device")
        return ServerArgs(parser.parse_args(argv))
    """)


def _fake_sglang(tmp_path, server_args):
    package = tmp_path / "sglang" / "srt"
    package.mkdir(parents=True)
    (tmp_path / "sglang" / "__init__.py").write_text('__version__ = "0.5.23"\n')
    (package / "__init__.py").write_text("")
    (package / "server_args.py").write_text(server_args)


def _host_check(tmp_path, mode, *args):
    done = subprocess.run([sys.executable, "-c", pf.HOST_CHECK_SCRIPT, "20", mode] + list(args), cwd=tmp_path,
                          env={"PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, check=False, timeout=60)
    return pf.interpret_parser_run(done.returncode, done.stdout, done.stderr, 1, 20, "0.5.23")


def test_resolve_mode_runs_sglangs_resolution_and_checks_with_device_cuda_without_a_gpu(tmp_path):
    """No torch, so no accelerator: resolution gets --device cuda; resolve_once and check_server_args both run."""
    _fake_sglang(tmp_path, RESOLVING_FAKE)
    findings, info = _host_check(tmp_path, "resolve", "--model-path", "/m")
    assert findings == [] and info["resolved"] is True and info["device_added"] is True and info["rc"] == 0
    findings, info = _host_check(tmp_path, "resolve", "--model-path", "/m", "--language-only")
    assert [(f["code"], f["severity"], f["source"]) for f in findings] == [("host_check_refused", "error", "host")]
    assert findings[0]["message"] == ("ValueError: Model type Qwen2ForCausalLM is not supported for encoder "
                                      "disaggregation.")
    assert info["rc"] == 3 and info["resolved"] is None
    findings, dummy = _host_check(tmp_path, "resolve", "--model-path", "/m", "--tp-size", "3")
    assert findings[0]["message"].startswith("AssertionError (SGLang gives no message) in ")
    findings, info = _host_check(tmp_path, "parse", "--model-path", "/m", "--language-only")
    assert findings == [] and info["resolved"] is None  # parse mode stops after argparse


def test_resolve_mode_on_a_release_that_resolves_inside_prepare_server_args(tmp_path):
    """0.5.9-0.5.18 have no resolve_once: prepare_server_args itself resolves (ServerArgs.__post_init__)."""
    _fake_sglang(tmp_path, textwrap.dedent("""\
        import argparse

        def prepare_server_args(argv):
            parser = argparse.ArgumentParser(prog="sglang serve")
            parser.add_argument("--model-path", required=True)
            parser.add_argument("--language-only", action="store_true")
            parser.add_argument("--device")
            ns = parser.parse_args(argv)
            if ns.language_only:
                raise ValueError("requires at least one encoder urls to be set via --encoder-urls")
            return ns
        """))
    findings, info = _host_check(tmp_path, "resolve", "--model-path", "/m")
    assert findings == [] and info["resolved"] is True
    findings, dummy = _host_check(tmp_path, "resolve", "--model-path", "/m", "--language-only")
    assert [f["message"] for f in findings] == ["ValueError: requires at least one encoder urls to be set via "
                                                "--encoder-urls"]


def test_resolution_plan_says_why_it_is_skipped():
    clean = sf.lint_server_args(MODEL, TABLE, "0.5.23")
    known = {"model": {"architecture": "X"}, "draft_wanted": False}
    assert pf.resolution_plan(True, clean, known) == ("resolve", None)
    mode, skipped = pf.resolution_plan(True, clean, {"model": None, "model_reason": "/srv/models/m does not exist yet"})
    assert mode == "parse" and skipped["code"] == "resolution_skipped" and skipped["severity"] == "info"
    assert "/srv/models/m does not exist yet" in skipped["message"]
    mode, skipped = pf.resolution_plan(False, clean, known)
    assert mode == "parse" and "sglang_server_preflight_resolve is false" in skipped["message"]
    broken = sf.lint_server_args(dict(MODEL, tp_size="x"), TABLE, "0.5.23")
    assert "the lint found errors" in pf.resolution_plan(True, broken, known)[1]["message"]
    mode, skipped = pf.resolution_plan(True, clean, dict(known, draft_wanted=True, draft=None, draft_reason="gone"))
    assert mode == "parse" and "draft model" in skipped["message"]


def test_release_map_and_strict_releases_in_lint_for_host():
    params = {"sglang_version": "0.5.24rc1", "release_map": {"0.5.24rc1": "0.5.23"}}
    lint, dummy, extra = pf.lint_for_host(MODEL, TABLE, params, {})
    assert lint.release == "0.5.23" and [f["code"] for f in extra if f["code"] == "release_mapped"] == ["release_mapped"]
    with pytest.raises(releases.ReleaseError) as info:
        pf.lint_for_host(MODEL, TABLE, {"sglang_version": "0.5.24rc1"}, {})
    assert "pre-release" in info.value.message and "sglang_server_release_map" in info.value.hint
