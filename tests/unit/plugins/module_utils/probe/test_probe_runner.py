# -*- coding: utf-8 -*-
"""probe_runner end to end against the in-test SSE server: sweep, warmup, prompts, accept length, ceiling, gates,
baseline, report files, and what must never leak (the API key)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import decode_ceiling
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.runner import (
    Probe,
    ProbeError,
    build_payload,
    default_requests,
    parse_spec_metrics,
    probe_and_gate,
    report_paths,
    resolve_ceiling,
    server_facts,
)

_SPEC = importlib.util.spec_from_file_location("probe_fakeserver_runner", str(Path(__file__).with_name("test_probe_fakeserver.py")))
_FAKE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_FAKE)
FakeSGLang = _FAKE.FakeSGLang
FAST = {"output_tokens": 6, "concurrency": [1, 3], "requests_per_level": 3}
QWEN35_27B_TEXT = {"tie_word_embeddings": False, "text_config": {
    "dtype": "bfloat16", "hidden_size": 5120, "intermediate_size": 17408, "num_hidden_layers": 64, "num_attention_heads": 24,
    "num_key_value_heads": 4, "head_dim": 256, "attn_output_gate": True, "vocab_size": 248320, "full_attention_interval": 4,
    "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4}}


def run(fake, **params):
    merged = dict(FAST, base_url=fake.url)
    merged.update(params)
    return probe_and_gate(merged)


def test_sweep_excludes_warmup_and_sends_exact_lengths():
    with FakeSGLang(tps=3000.0) as fake:
        results, failure = run(fake, warmup_requests=2)
        posts = fake.posts("/v1/completions")
    assert failure is None
    assert [lv["concurrency"] for lv in results["levels"]] == [1, 3]
    assert [lv["requests"] for lv in results["levels"]] == [3, 3]
    assert len(posts) == 2 + 6
    assert [p["body"]["max_tokens"] for p in posts[:2]] == [6, 6]  # warmup: min(output_tokens, 64)
    for post in posts:
        assert post["body"]["ignore_eos"] is True and post["body"]["stream"] is True
        assert post["body"]["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
        assert post["body"]["model"] == "fake-model"       # discovered from /v1/models
    prompts = [p["body"]["prompt"] for p in posts]
    assert len(set(prompts)) == len(prompts)                # unique first line: no prefix-cache hits
    level = results["levels"][0]
    assert level["output_tokens"] == 18 and level["tokens_source"] == "server"
    assert results["server_version"] == "0.5.23-fake" and results["warmup_requests"] == 2


def test_api_key_is_used_but_never_returned():
    with FakeSGLang(api_key="TOPSECRET", tps=3000.0) as fake:
        results, failure = run(fake, api_key="TOPSECRET", concurrency=[1], requests_per_level=1)
    assert failure is None
    assert "TOPSECRET" not in json.dumps(results)          # /server_info carries it; server_facts drops it
    assert server_facts({"api_key": "k", "version": "1"}) == {"version": "1", "args": {}, "tp_size": None, "speculative_algorithm": None,
                                                              "model_path": None, "served_model_name": None, "avg_spec_accept_length": None}


@pytest.mark.parametrize("endpoint", ["chat", "generate"])
def test_chat_and_native_endpoints(endpoint):
    with FakeSGLang(tps=3000.0, accept_length=2.0) as fake:
        results, failure = run(fake, endpoint=endpoint, concurrency=[2], requests_per_level=2)
        post = fake.posts()[-1]["body"]
    assert failure is None
    if endpoint == "chat":
        assert post["messages"][0]["role"] == "user"
        assert results["accept_length"] is None
    else:
        assert post["sampling_params"] == {"max_new_tokens": 6, "temperature": 0.0, "ignore_eos": True}
        assert results["accept_length"] == 2.0               # per-request meta_info: 6 tokens / 3 verify steps
        assert results["accept_length_source"].startswith("per-request meta_info")


def test_accept_length_from_metrics_counters_diffed_around_each_level():
    with FakeSGLang(tps=3000.0, accept_length=3.0, metrics=True) as fake:
        results, _failure = run(fake, concurrency=[1], requests_per_level=2)
    assert results["levels"][0]["accept_length"] == 3.0      # 12 tokens / 4 verify calls (tp_rank 1 not double counted)
    assert "/metrics counters" in results["accept_length_source"]
    text = 'sglang:spec_verify_calls_total{tp_rank="0"} 10\nsglang:spec_verify_calls_total{tp_rank="1"} 10\nsglang:generation_tokens_total 25\n'
    assert parse_spec_metrics(text) == {"sglang:spec_verify_calls_total": 10.0, "sglang:generation_tokens_total": 25.0}


def test_gates_miss_with_figures_and_results_still_returned():
    with FakeSGLang(tps=3000.0) as fake:
        results, failure = run(fake, min_decode_tps=1e9, max_ttft_ms=0.001)
    assert failure.startswith("2 probe gates missed: decode ")
    assert "< min_decode_tps 1e+09" in failure and "> max_ttft_ms 0.001" in failure
    assert results["levels"] and not results["gates"]["passed"]


def test_failed_requests_fail_the_probe_and_a_failed_warmup_stops_it():
    with FakeSGLang(tps=3000.0, fail_after=2) as fake:
        results, failure = run(fake, concurrency=[1], requests_per_level=3)
    assert "2 of 3 requests failed at concurrency 1" in failure and results["levels"][0]["failed"] == 2
    with FakeSGLang(fail_status=404) as fake:
        with pytest.raises(ProbeError, match="warmup request failed.*HTTP 404"):
            run(fake)


def test_unreachable_server_is_a_probe_error():
    with FakeSGLang() as fake:
        url = fake.url
    with pytest.raises(ProbeError, match="cannot reach the server"):
        probe_and_gate(dict(FAST, base_url=url))


def with_figures(saved, decode_tps, ttft_ms):
    """A baseline: the saved report with every level's compared figures set, so no check rests on two timed runs agreeing."""
    levels = []
    for level in saved["levels"]:
        level = dict(level, decode_tps=dict(level["decode_tps"], mean=decode_tps), output_throughput=decode_tps,
                     ttft_ms=dict(level["ttft_ms"], p50=ttft_ms))
        levels.append(level)
    return dict(saved, levels=levels)


def test_baseline_file_regression_and_report_files(tmp_path):
    with FakeSGLang(tps=3000.0) as fake:
        first, failure = run(fake, report_path=str(tmp_path / "probe" / "first.json"))
        assert failure is None
        assert first["report_files"] == [str(tmp_path / "probe" / "first.json"), str(tmp_path / "probe" / "first.md")]
        saved = json.loads((tmp_path / "probe" / "first.json").read_text())
        assert "markdown" not in saved and saved["levels"] == first["levels"]
        assert (tmp_path / "probe" / "first.md").read_text().startswith("## SGLang probe: fake-model")
        # a baseline file far below anything the fake serves: every level compared, every check passes
        modest = tmp_path / "probe" / "modest.json"
        modest.write_text(json.dumps(with_figures(saved, decode_tps=1.0, ttft_ms=60000.0)))
        again, failure = run(fake, baseline=str(modest), baseline_tolerance=5, baseline_ttft_slack_ms=5)
        baseline_checks = [c for c in again["gates"]["checks"] if c["gate"] == "baseline"]
        assert failure is None
        assert len(baseline_checks) == 3 * len(again["levels"]) and all(c["passed"] for c in baseline_checks)
        # one far above it: the regression is named with both figures
        _results, failure = run(fake, baseline=with_figures(saved, decode_tps=1e9, ttft_ms=60000.0), baseline_tolerance=5)
    assert "decode tok/s (mean) at concurrency 1" in failure and "vs baseline 1000000000.00 tok/s" in failure
    assert report_paths("/x/r") == ("/x/r.json", "/x/r.md")


def test_ceiling_from_inputs_uses_server_tp_and_measured_speed():
    with FakeSGLang(tps=3000.0) as fake:
        results, _failure = run(fake, concurrency=[1], requests_per_level=2,
                                ceiling={"gpu": "NVIDIA L4", "params_b": 0.5, "dtype": "bf16", "num_layers": 24, "hidden_size": 896})
    assert results["ceiling"]["inputs"]["tp"] == 2           # /server_info tp_size
    mean = results["levels"][0]["decode_tps"]["mean"]
    assert results["efficiency"] == pytest.approx(mean / results["ceiling"]["expected"]["tokens_per_s"], rel=1e-3)
    assert results["efficiency_of_bound"] == pytest.approx(mean / results["ceiling"]["tokens_per_s"], rel=1e-3)
    assert results["verdict"] and results["efficiency_concurrency"] == 1
    with FakeSGLang(tps=3000.0) as fake:
        results, _failure = run(fake, concurrency=[1], requests_per_level=1, ceiling={"gpu": "Imaginary GPU 9000", "params_b": 1})
    assert results["ceiling"] is None and "not in the bandwidth table" in results["ceiling_error"]


def test_precomputed_ceiling_is_rescaled_to_the_run_accept_length(tmp_path):
    ceiling = decode_ceiling(27, gpu="NVIDIA RTX A6000", tp=2, link="PHB", dtype="bf16", num_layers=64, hidden_size=5120)
    scaled = resolve_ceiling(ceiling, {}, 2.0)
    assert scaled["tokens_per_s"] == pytest.approx(2 * ceiling["tokens_per_s"], rel=1e-3)
    assert scaled["tokens_per_s_no_spec"] == pytest.approx(ceiling["tokens_per_s"], rel=1e-3)
    config = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
              "vocab_size": 151936, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    from_path = resolve_ceiling({"model_config_path": str(path), "gpu": "NVIDIA L4"}, {"tp_size": 1}, None)
    assert from_path == decode_ceiling(config, gpu="NVIDIA L4", tp=1)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "config.json").write_text(json.dumps(config))
    assert resolve_ceiling({"gpu": "NVIDIA L4"}, {"model_path": str(model_dir), "tp_size": 1}, None)["tokens_per_s"] == from_path["tokens_per_s"]


def test_the_servers_flags_and_the_runs_accept_length_set_the_expectation():
    info = {"version": "0.5.23-fake", "tp_size": 2, "speculative_algorithm": "EAGLE", "speculative_num_steps": 3,
            "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4, "enable_torch_compile": True, "disable_cuda_graph": False}
    box = {"gpu": "NVIDIA RTX A6000", "link": "PHB", "params_b": 27, "dtype": "bf16", "num_layers": 64, "hidden_size": 5120}
    with FakeSGLang(tps=3000.0, accept_length=2.0, server_info=info) as fake:
        results, _failure = run(fake, endpoint="generate", concurrency=[1], requests_per_level=2, ceiling=box)
    ceiling = results["ceiling"]
    assert results["accept_length"] == 2.0 and ceiling["accept_length"] == 2.0
    assert ceiling["inputs"]["torch_compile"] is True and ceiling["inputs"]["speculative"]["num_steps"] == 3
    assert ceiling["expected"] == decode_ceiling(27, accept_length=2.0, server_args=info, **{k: v for k, v in box.items() if k != "params_b"})["expected"]
    # a precomputed filter result without speculation is re-priced for the server's drafts and the run's accept length
    plain = decode_ceiling(QWEN35_27B_TEXT, gpu="NVIDIA RTX A6000", tp=2, link="PHB")
    priced = resolve_ceiling(plain, server_facts(info), 2.0)
    assert priced["expected"]["speculative"]["draft_passes"] == 4 and priced["expected"]["tokens_per_s"] == 39.3
    unmeasured = resolve_ceiling(plain, server_facts(info), None)
    assert unmeasured["tokens_per_s"] == 116.05 and unmeasured["expected"]["tokens_per_s"] is None


def test_options_are_validated_before_anything_is_sent():
    with pytest.raises(ValueError, match="connection must be one of keep-alive, per-request"):
        Probe(dict(base_url="http://127.0.0.1:1")).client.run_level("/generate", [b"{}"], 1, "sometimes")
    for bad, match in (({"concurrency": []}, "concurrency"), ({"concurrency": [0]}, "concurrency"), ({"output_tokens": 1}, "output_tokens"),
                       ({"prompts": ["a"], "prompts_file": "/x"}, "mutually exclusive"), ({"requests_per_level": 0}, "requests_per_level")):
        with pytest.raises(ProbeError, match=match):
            Probe(dict(base_url="http://127.0.0.1:1", **bad))
    assert default_requests(1) == 4 and default_requests(16) == 32
    assert build_payload("generate", None, "p", 5, 0.0, True) == {"text": "p", "stream": True,
                                                                  "sampling_params": {"max_new_tokens": 5, "temperature": 0.0, "ignore_eos": True}}
    assert "continuous_usage_stats" not in build_payload("completions", "m", "p", 5, 0.0, False)["stream_options"]


def test_user_prompts_are_used_in_turn():
    with FakeSGLang(tps=3000.0) as fake:
        run(fake, prompts=["alpha", "beta"], unique_prompts=False, concurrency=[1], requests_per_level=3, warmup_requests=0)
        assert [p["body"]["prompt"] for p in fake.posts()] == ["alpha", "beta", "alpha"]
