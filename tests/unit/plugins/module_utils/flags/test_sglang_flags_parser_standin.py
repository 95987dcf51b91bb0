"""The preflight's real-parser path against the SGLang stand-in installed in a venv, as on a lab host.

The same parse-only command the module runs (sglang_flags_preflight.parser_command) is executed with the venv's
own Python; the stand-in parses with the release's flag table and argparse, like SGLang. With real SGLang the
command is identical (see tools/dev/flags/README.md); only the 6-9 s of torch imports differ.
"""
from __future__ import annotations

import os
import subprocess
import sysconfig
import time
import venv
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.preflight import interpret_parser_run, parser_command

REPO = Path(__file__).resolve().parents[5]
STANDIN_SRC = REPO / "tools" / "standins" / "sglang" / "src"

STORY = {"model-path": "Qwen/Qwen3.6-27B", "tp-size": 2, "speculative-algorithm": "NEXTN", "speculative-num-steps": 3,
         "enforce-piecewise-cuda-graph": True, "enable-single-batch-overlap": True}


@pytest.fixture(scope="module")
def standin_venv(tmp_path_factory):
    """A venv whose site-packages sees the stand-in's source and PyYAML (no network, no pip)."""
    pytest.importorskip("yaml")
    import yaml  # pylint: disable=import-outside-toplevel

    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    yaml_dir = Path(yaml.__file__).resolve().parent.parent
    Path(purelib, "standin.pth").write_text("%s\n%s\n" % (STANDIN_SRC, yaml_dir))
    assert sysconfig.get_paths()["purelib"] != purelib  # really a venv of its own
    return root


def run_parser(venv_root: Path, config: dict, release: str, tmp_path: Path, expected: str = ""):
    """Write the config as the role does and run the module's parse-only command in the venv (playing ``release``)."""
    path = tmp_path / "main.yaml"
    path.write_text(render_server_config(config))
    env = dict(os.environ, SGLANG_STANDIN_RELEASE=release)
    started = time.monotonic()
    done = subprocess.run(parser_command(str(venv_root / "bin" / "python"), str(path), timeout=60), capture_output=True, text=True,
                          timeout=90, env=env, check=False)
    return interpret_parser_run(done.returncode, done.stdout, done.stderr, time.monotonic() - started, 60, release=expected or release)


def test_the_story_on_0_5_23_is_refused_by_the_parser_with_the_removed_flag(standin_venv, tmp_path):
    findings, info = run_parser(standin_venv, STORY, "0.5.23", tmp_path)
    assert info["ran"] and info["rc"] == 2 and info["sglang_version"] == "0.5.23"
    errors = [f for f in findings if f["severity"] == "error"]
    assert errors and all(f["source"] == "parser" for f in errors)
    assert "--enforce-piecewise-cuda-graph" in " ".join(f["message"] for f in errors)


def test_clean_flags_parse_on_0_5_23(standin_venv, tmp_path):
    clean = {key: value for key, value in STORY.items() if key != "enforce-piecewise-cuda-graph"}
    findings, info = run_parser(standin_venv, clean, "0.5.23", tmp_path)
    assert info["rc"] == 0, info
    assert not [f for f in findings if f["severity"] == "error"]


def test_a_venv_holding_another_release_than_the_lint_assumed_is_an_error(standin_venv, tmp_path):
    findings, info = run_parser(standin_venv, {"model-path": "Qwen/Qwen3-0.6B"}, "0.5.12", tmp_path, expected="0.5.23")
    assert info["rc"] == 0 and info["sglang_version"] == "0.5.12"
    mismatch = [f for f in findings if f["severity"] == "error"]
    assert len(mismatch) == 1 and "0.5.12" in mismatch[0]["message"]
