# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight against real SGLang 0.5.23 (the CPU venv of tools/dev/sglang-cpu-venv; `make units` builds it).

Two uses of the venv: the module's own host-check command on a rendered file (a hub-cached model, resolution,
SGLang's refusal read back as a finding), and the acceptance over tests/data/preflight_configs/: no config
passes the preflight (lint plus host check) that SGLang refuses, and every config SGLang accepts that the
preflight refuses is refused on purpose, by a check docs/preflight.md#deliberate-refusals lists with its reason.
SGLang's verdicts are computed once per content (build/sglang-cpu/outcomes/), so this costs one SGLang import.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import preflight as pf
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config

ROOT = Path(__file__).resolve().parents[5]


def load_agreement():
    spec = importlib.util.spec_from_file_location("agreement", ROOT / "tools" / "dev" / "flags" / "agreement.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


AGREEMENT = load_agreement()


@pytest.fixture(name="real_venv", scope="module")
def real_venv_fixture():
    venv = AGREEMENT.cpu_venv()
    if venv is None:
        pytest.skip("the real SGLang CPU venv is not built: run `make sglang-cpu-venv` (make units does)")
    assert (Path(venv) / "bin" / "python").exists(), venv
    return venv


@pytest.fixture(name="report", scope="module")
def report_fixture(real_venv):
    return AGREEMENT.evaluate(str(Path(real_venv) / "bin" / "python"))


def test_the_modules_host_check_resolves_a_hub_cached_model_with_real_sglang(real_venv, tmp_path):
    """The command the module runs, on the file the lint renders, with the model in an HF hub cache."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "hub" / "models--Org--Text-Model"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text(
        (AGREEMENT.MODELS / "qwen2-text" / "config.json").read_text())
    env = {"HF_HOME": str(tmp_path / "hf")}
    config = {"model-path": "Org/Text-Model", "language-only": True}
    models = pf.locate_models(config, env)
    assert models["model"]["architecture"] == "Qwen2ForCausalLM"  # found where SGLang will look
    path = tmp_path / "main.yaml"
    path.write_text(render_server_config(config))
    started = time.monotonic()
    done = subprocess.run(pf.parser_command(str(Path(real_venv) / "bin" / "python"), str(path), 120, None,
                                            "resolve"),
                          capture_output=True, text=True, timeout=180, check=False,
                          env=dict(os.environ, **env, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"))
    findings, info = pf.interpret_parser_run(done.returncode, done.stdout, done.stderr, time.monotonic() - started,
                                             120, "0.5.23")
    assert info["sglang_version"] == "0.5.23" and info["device_added"] is True, (info, done.stderr[-2000:])
    assert [(f["code"], f["severity"], f["source"]) for f in findings] == [("host_check_refused", "error", "host")]
    assert findings[0]["message"].startswith("ValueError: Model type Qwen2ForCausalLM is not supported for encoder "
                                             "disaggregation. Supported architectures: Qwen2VL, Qwen3VL")


def test_no_config_passes_the_preflight_that_sglang_refuses(report):
    passed = [row["name"] for row in report["rows"] if not row["sglang_ok"] and row["preflight_ok"]]
    assert passed == []
    counts = AGREEMENT.counts(report)
    assert counts["configs"] >= 150 and counts["sglang_refuses"] > 0 and counts["sglang_accepts"] > 0


def test_every_refusal_of_a_config_sglang_accepts_is_deliberate_and_documented(report):
    documented = report["documented"]
    for row in report["rows"]:
        if row["sglang_ok"] and not row["preflight_ok"]:
            assert row["lint_codes"], row  # refused by the lint, never by the host check (which is SGLang)
            assert set(row["lint_codes"]) <= set(documented), row
    assert AGREEMENT.counts(report)["undocumented_refusals"] == []


def test_the_lint_catches_most_of_what_sglang_refuses(report):
    """The host check is the backstop; the lint alone must already catch the refusals it has rules for."""
    left = sorted(row["name"] for row in report["rows"] if not row["sglang_ok"] and row["lint_ok"])
    # Left to the host check on purpose (docs/preflight.md#what-the-lint-leaves-to-the-host-check): a context
    # length inside the yarn scaling (depends on the transformers release), and AWQ Marlin, which SGLang refuses
    # only where no GPU can run it.
    assert left == ["ctx-yarn-scaled", "quant-awq-marlin"]


def test_the_stand_in_parses_and_resolves_like_real_sglang(report, tmp_path):
    """The contract of the rehearsal backend: on every config, the stand-in accepts what SGLang accepts and refuses
    the rest with SGLang's own message (except where the config says why it cannot)."""
    import venv  # pylint: disable=import-outside-toplevel

    import yaml  # pylint: disable=import-outside-toplevel

    root = tmp_path / "standin"
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "standin.pth").write_text("%s\n%s\n" % (ROOT / "tools" / "standins" / "sglang" / "src",
                                                          Path(yaml.__file__).resolve().parent.parent))
    cases = AGREEMENT.load_cases()
    jobs = [{"name": case["name"], "kind": "truth", "config": AGREEMENT.sglang_config(AGREEMENT.case_args(case))}
            for case in cases]
    standin = AGREEMENT.run_outcomes(str(python), jobs, env={"SGLANG_STANDIN_RELEASE": "0.5.23"})
    assert standin["sglang_version"] == "0.5.23"
    real = report["truth"]
    differ = []
    for case in cases:
        got, want = standin["results"][case["name"]], real[case["name"]]
        same = got["ok"] == want["ok"] and (want["ok"] or got["message"] == want["message"])
        if not same and not case.get("standin_differs"):
            differ.append((case["name"], want, got))
    assert differ == [], json.dumps(differ, indent=1)
    excused = [case["name"] for case in cases if case.get("standin_differs")]
    assert excused == ["spec-trtllm-topk4", "deepep-v2-with-tbo"]
