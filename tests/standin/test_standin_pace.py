"""Pacing: the profile model (pure) and the pace a running server keeps (measured)."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import json
import time
import urllib.request

import pytest

from pathlib import Path

import yaml

from standin_helpers import http
from sglang._standin import tokens
from sglang._standin.physics.ceiling import decode_ceiling
from sglang._standin.profile import expected_accept_length, load_profile, memory_plan, pace_for, startup_seconds

STORY = load_profile("a6000x2-27b-nextn")
NEXTN3 = {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
          "speculative_num_draft_tokens": 4, "tp_size": 2}
GROUP_VARS = Path(__file__).resolve().parents[2] / "inventory" / "lab" / "group_vars"


def test_story_box_without_speculation_is_the_collections_expectation():
    pace = pace_for(STORY, {"tp_size": 2})
    model = decode_ceiling(STORY["physics"]["model_config"], gpu="NVIDIA RTX A6000", tp=2, link="PHB", pcie_gen=4, pcie_width=16, p2p=True)
    assert pace.stream_tok_s(1) == pytest.approx(model["expected"]["tokens_per_s"], rel=1e-3) == pytest.approx(24.57, abs=0.01)
    assert pace.bound_tok_s == pytest.approx(29.01, abs=0.01)


def test_story_box_with_nextn_3_steps():
    pace = pace_for(STORY, NEXTN3)
    assert pace.accept_length == pytest.approx(expected_accept_length(0.78, 3)) == pytest.approx(2.863, abs=1e-3)
    # one verify pass (40.70 ms) and three draft passes plus the draft extend (4 x 2.55 ms) per 2.86 tokens
    assert pace.stream_tok_s(1) == pytest.approx(2.863 / 0.0508964, rel=1e-3)
    assert 50.0 < pace.stream_tok_s(1) < 57.0          # the story measured 50-57 tok/s
    assert pace.stream_tok_s(1) < pace.bound_tok_s      # never past the bound at that accept length


def test_num_steps_changes_accept_length_and_pace():
    by_steps = {s: pace_for(STORY, {**NEXTN3, "speculative_num_steps": s, "speculative_num_draft_tokens": s + 1})
                for s in (1, 2, 3, 5)}
    accepts = [by_steps[s].accept_length for s in (1, 2, 3, 5)]
    assert accepts == sorted(accepts) and accepts[0] < accepts[-1]
    assert by_steps[1].stream_tok_s() < 0.75 * by_steps[3].stream_tok_s()   # the fleet's "slower" change


@pytest.mark.parametrize("flags,expected", [
    ({"enable_torch_compile": True}, 57.01),        # half the per-layer overhead: +1.4% near the bandwidth bound
    ({"enable_single_batch_overlap": True}, 56.25),  # nothing in the model
    ({"disable_cuda_graph": True}, 51.97),           # the host launches every kernel: +45 us a layer, all-reduce x2
    ({"disable_custom_all_reduce": True}, 54.43),    # NCCL's 20 us instead of the one-shot kernel's 8 us, 130 times a step
])
def test_flags_move_the_pace_only_through_the_model(flags, expected):
    base = pace_for(STORY, NEXTN3)
    pace = pace_for(STORY, {**NEXTN3, **flags})
    assert pace.stream_tok_s() == pytest.approx(expected, abs=0.01)
    assert pace.stream_tok_s() < pace.bound_tok_s <= base.bound_tok_s
    slow = startup_seconds(STORY, {"enable_torch_compile": True})["graph_decode"]
    assert slow > startup_seconds(STORY, {})["graph_decode"]


def test_a_launch_overhead_flag_gains_most_where_overhead_is_a_large_share():
    small = load_profile("test-fast")
    base, compiled = pace_for(small, {}).stream_tok_s(), pace_for(small, {"enable_torch_compile": True}).stream_tok_s()
    assert base == pytest.approx(395.62, abs=0.01) and compiled == pytest.approx(444.90, abs=0.01)   # +12.5%
    story = pace_for(STORY, {"tp_size": 2}).stream_tok_s(), pace_for(STORY, {"tp_size": 2, "enable_torch_compile": True}).stream_tok_s()
    assert story[1] / story[0] == pytest.approx(1.016, abs=1e-3)                                      # +1.6%


@pytest.mark.parametrize("group,profile", [("a6000_pcie", "a6000x2-27b-nextn"), ("rtx4090_pcie", "rtx4090x2-8b-nop2p"),
                                           ("l40s_pcie", "test-fast")])
def test_the_lab_ceiling_reads_the_model_the_stand_in_paces_by(group, profile):
    shape = yaml.safe_load((GROUP_VARS / ("%s.yml" % group)).read_text(encoding="utf-8"))["lab_model_shape"]
    assert shape["model_config"] == load_profile(profile)["physics"]["model_config"]


def test_batch_makes_each_stream_slower_but_the_batch_faster():
    pace = pace_for(STORY, {"tp_size": 2})
    assert pace.stream_tok_s(16) < pace.stream_tok_s(1)
    assert 16 * pace.stream_tok_s(16) > 8 * pace.stream_tok_s(1)


def test_ttft_from_prefill_rate():
    pace = pace_for(STORY, {"tp_size": 2})
    assert pace.ttft(3500) == pytest.approx(0.045 + 1.0)


def test_memory_plan_decides_kv_failures():
    assert memory_plan(STORY, {"tp_size": 2})["tokens"] > 100_000
    assert memory_plan(STORY, {"tp_size": 2, "mem_fraction_static": 0.5})["tokens"] == 0
    assert memory_plan(STORY, {"tp_size": 1})["tokens"] == 0  # 50 GiB of weights on one 48 GB card


def test_tokenizer_rule():
    assert tokens.count_text("Hello, world! It's 2 o'clock.") == 12  # Hello , world ! It ' s 2 o ' clock .
    assert tokens.count_chat([{"role": "user", "content": "Hi there"}]) == 2 + tokens.PER_MESSAGE + tokens.ASSISTANT_HEADER
    text = tokens.words(1234, 0, 50)
    assert tokens.count_text(text) == 50


# --- measured on a running server -----------------------------------------------------------------------


def stream_times(url, body):
    """Arrival times of chunks carrying text, plus the reported usage."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    start, times, usage = time.perf_counter(), [], None
    with urllib.request.urlopen(req, timeout=30) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data: {"):
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                usage = event["usage"]
            choices = event.get("choices") or []
            if choices and (choices[0].get("text") or (choices[0].get("delta") or {}).get("content")):
                times.append(time.perf_counter())
    return start, times, usage


def standin_info(server):
    """The stand-in's own part of /server_info: the pace it keeps (tokens per second of one stream)."""
    return json.loads(http("GET", server.url("/server_info"))[1])["standin"]


# A loaded machine can only make a paced stream slower, never faster: the wall-clock checks below are lower bounds.
# The rate a stream really reaches is a figure of benchmarks/probe_accuracy.py, not a test.


def test_server_keeps_the_profile_pace(launch):
    server = launch(settings={"pace_scale": "1"}).wait_ready()
    assert standin_info(server)["expected_stream_tok_s"] == 395.617
    _start, times, usage = stream_times(server.url("/v1/completions"), {
        "prompt": "pace me", "max_tokens": 160, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}})
    assert usage["completion_tokens"] == 160 and len(times) == 160
    assert times[-1] - times[0] >= 0.95 * 159 / 395.617   # paced, not sent at once


def test_jitter_spreads_the_gaps_and_keeps_the_pace(launch):
    server = launch(settings={"pace_scale": "1", "jitter": "0.5", "seed": "7"}).wait_ready()
    assert standin_info(server)["expected_stream_tok_s"] == 395.617
    _start, times, _usage = stream_times(server.url("/v1/completions"), {
        "prompt": "jitter", "max_tokens": 200, "ignore_eos": True, "stream": True})
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert times[-1] - times[0] >= 0.8 * 199 / 395.617
    assert max(gaps) > 1.2 * min(gaps)


def test_pace_scale_is_the_time_scale_by_default(launch):
    fast = launch(settings={"time_scale": "0.1"}).wait_ready()   # 395.617 tok/s / 0.1 (the profile's pace, unrounded 395.6166)
    assert standin_info(fast)["expected_stream_tok_s"] == 3956.166
    fast.stop()
    apart = launch(settings={"time_scale": "0.1", "pace_scale": "1"}).wait_ready()
    assert standin_info(apart)["expected_stream_tok_s"] == 395.617


def test_flag_effect_visible_to_a_tuner(launch):
    """torch.compile's modelled gain (+12.5% on the small model) is in the pace the server keeps; a no-op flag is not."""
    paces = {}
    for name, flags in (("base", []), ("compile", ["--enable-torch-compile"]), ("sbo", ["--enable-single-batch-overlap"])):
        server = launch(*flags, settings={"pace_scale": "1"}).wait_ready()
        paces[name] = standin_info(server)["expected_stream_tok_s"]
        server.stop()
    assert paces == {"base": 395.617, "compile": 444.899, "sbo": 395.617}


def test_speculative_accept_length_is_reported(launch):
    server = launch("--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                    "--speculative-num-draft-tokens", "4", settings={"seed": "3"}).wait_ready()
    status, raw, _headers = http("POST", server.url("/generate"), {"text": "speculate", "sampling_params": {
        "max_new_tokens": 3000, "ignore_eos": True}})
    assert status == 200
    meta = json.loads(raw)["meta_info"]
    assert meta["completion_tokens"] == 3000
    expected = expected_accept_length(0.7, 3)
    assert meta["spec_accept_length"] == pytest.approx(expected, rel=0.1)
    assert meta["spec_verify_ct"] < 3000 / 1.8
    info = json.loads(http("GET", server.url("/server_info"))[1])
    assert info["internal_states"][0]["avg_spec_accept_length"] == pytest.approx(expected, rel=0.1)
    assert info["standin"]["expected_accept_length"] == pytest.approx(expected, rel=0.01)
