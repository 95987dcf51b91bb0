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
    assert command[3:5] == ["/v/bin/python", "-c"] and command[-3:] == ["30", "--config", "cfg/x.yaml"]
    assert pf.parser_command("/v/bin/python", "/c.yaml", 0)[0] == "/v/bin/python"


def test_parse_only_script_is_valid_python():
    compile(pf.PARSE_ONLY_SCRIPT, "<parse-only>", "exec")


def test_success_reports_the_installed_version():
    findings, info = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.23\nGPUFLEET_PARSE_OK\n", "", 6.2, 60,
                                             "0.5.23")
    assert findings == []
    assert info == {"ran": True, "rc": 0, "seconds": 6.2, "error": "", "sglang_version": "0.5.23"}


def test_version_mismatch_is_an_error():
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.22\n", "", 1, 60, "0.5.23")
    assert [(f["code"], f["severity"], f["source"]) for f in findings] == [("version_mismatch", "error", "parser")]
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=0.5.23.post1\n", "", 1, 60, "0.5.23")
    assert findings == []
    findings, dummy = pf.interpret_parser_run(0, "GPUFLEET_SGLANG_VERSION=dev\n", "", 1, 60, "0.5.23")
    assert [f["code"] for f in findings] == ["parser_version_unknown"]


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
    assert "prepare_server_args" in findings[0]["hint"]


def test_parser_output_is_redacted():
    stderr = "sglang serve: error: argument --model-path: invalid value: 'hf_abcdefghijklmnopqrstuv'\n"
    findings, info = pf.interpret_parser_run(2, "", stderr, 1, 60)
    assert "hf_abc" not in json.dumps([findings, info])


def test_verdict_lists_every_error_and_honours_fail_on():
    errors = [findings.finding("error", "a", "x", "bad x", "fix x"), findings.finding("error", "b", "y", "bad y")]
    warning = [findings.finding("warning", "c", "z", "odd z", "fix z")]
    failed, msg = pf.verdict(errors + warning, "error", "0.5.23")
    assert failed and "x: bad x (fix: fix x)" in msg and "y: bad y" in msg and "odd z" not in msg
    failed, msg = pf.verdict(warning, "warning", "0.5.23")
    assert failed and "z: odd z" in msg
    failed, msg = pf.verdict(errors, "never", "0.5.23")
    assert not failed and "bad x" in msg
    assert pf.verdict(warning, "error", "0.5.23") == (False, "SGLang 0.5.23 launch flags: 0 errors, 1 warning, 0 info")


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
    assert result["report"][0].startswith("ERROR tp_sise: unrecognized arguments: --tp-sise -- fix: Did you mean")


def test_release_error_result():
    with pytest.raises(releases.ReleaseError) as info:
        releases.select_table_release("0.9.0", ["0.5.23"])
    result = pf.release_error_result(info.value, "0.9.0")
    assert result["failed"] and result["findings"][0]["code"] == "release_unsupported"
    assert "tools/dev/flags/dump_flags.py" in result["msg"]


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
        return subprocess.run([sys.executable, "-c", pf.PARSE_ONLY_SCRIPT, "20"] + list(args), cwd=tmp_path,
                              env={"PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, check=False,
                              timeout=60)

    ok = run("--model-path", "/m")
    assert ok.returncode == 0 and pf.PARSE_OK_MARKER in ok.stdout
    assert "GPUFLEET_SGLANG_VERSION=0.5.23" in ok.stdout
    bad = run("--model-path", "/m", "--nope")
    findings, dummy = pf.interpret_parser_run(bad.returncode, bad.stdout, bad.stderr, 1, 20)
    assert [(f["code"], f["flag"]) for f in findings] == [("parser_unrecognized", "nope")]
