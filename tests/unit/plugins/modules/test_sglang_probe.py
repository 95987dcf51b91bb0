# -*- coding: utf-8 -*-
"""sglang_probe module: exit and fail results against the in-test SSE server, check mode, unreachable server."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.modules import sglang_probe

_HELPER = Path(__file__).resolve().parents[1] / "module_utils" / "probe" / "test_probe_fakeserver.py"
_SPEC = importlib.util.spec_from_file_location("probe_fakeserver_for_module", str(_HELPER))
_FAKE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_FAKE)
FakeSGLang = _FAKE.FakeSGLang

FAST = {"concurrency": [1, 2], "requests_per_level": 2, "output_tokens": 5}


def run_module(args, capsys):
    """Run main() with these module args; returns (exit code, parsed result)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as caught:
            sglang_probe.main()
    return caught.value.code, json.loads(capsys.readouterr().out)


def test_success_returns_levels_summary_and_markdown(capsys):
    with FakeSGLang(tps=3000.0, api_key="k-123") as fake:
        code, result = run_module(dict(FAST, base_url=fake.url, api_key="k-123", min_decode_tps=1), capsys)
    assert code == 0 and not result.get("failed") and result["changed"] is False
    assert [lv["concurrency"] for lv in result["levels"]] == [1, 2]
    assert result["msg"].startswith("decode ") and "tok/s per request at concurrency 1" in result["msg"]
    assert result["markdown"].startswith("## SGLang probe: fake-model")
    assert result["gates"]["passed"] is True
    assert "k-123" not in json.dumps(result)


def test_missed_gate_fails_with_the_figures_and_keeps_the_results(capsys):
    with FakeSGLang(tps=3000.0) as fake:
        code, result = run_module(dict(FAST, base_url=fake.url, min_decode_tps=1e9), capsys)
    assert code == 1 and result["failed"] is True
    assert result["msg"].startswith("sglang_probe: 1 probe gate missed: decode ")
    assert "< min_decode_tps 1e+09" in result["msg"]
    assert result["levels"] and result["gates"]["passed"] is False


def test_check_mode_sends_nothing(capsys):
    with FakeSGLang() as fake:
        code, result = run_module(dict(FAST, base_url=fake.url, _ansible_check_mode=True), capsys)
        assert fake.log == []
    assert code == 0 and result["skipped"] is True and result["changed"] is False
    assert result["msg"] == "check mode: would probe %s (completions, keep-alive connections) at concurrency 1, 2" % fake.url


def test_unreachable_server_fails_with_the_reason(capsys):
    with FakeSGLang() as fake:
        url = fake.url
    code, result = run_module(dict(FAST, base_url=url), capsys)
    assert code == 1 and result["msg"].startswith("sglang_probe: cannot reach the server at %s" % url)


def test_report_path_writes_json_and_markdown(tmp_path, capsys):
    with FakeSGLang(tps=3000.0) as fake:
        code, result = run_module(dict(FAST, base_url=fake.url, report_path=str(tmp_path / "r.json")), capsys)
    assert code == 0 and result["report_files"] == [str(tmp_path / "r.json"), str(tmp_path / "r.md")]
    assert json.loads((tmp_path / "r.json").read_text())["levels"] == result["levels"]
