"""HTTP API, startup sequence and graceful stop, against running stand-in servers."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import json
import re
import signal
import time
import urllib.request

import pytest

from standin_helpers import WAIT_S, Server, Stream, free_port, http, sse_events, standin_env
from sglang._standin import tokens


@pytest.fixture(scope="module")
def server():
    """One ready server shared by the read-only API tests."""
    port = free_port()
    srv = Server(["--model-type", "llm", "--model-path", "/models/test", "--port", str(port), "--enable-metrics",
                  "--enable-cache-report", "--api-key", "sk-secret"], standin_env(), port)
    srv.wait_ready()
    yield srv
    srv.stop()


AUTH = {"authorization": "Bearer sk-secret"}


def test_startup_lines_in_order(server):
    order = ["server_args=ServerArgs(", "Init parallel begin.", "Init parallel ends.", "Load weight begin.",
             "Load weight end.", "KV Cache is allocated. dtype: torch.bfloat16, #tokens: ", "Memory pool end.",
             "Capture target prefill CUDA graph begin.", "Capture target decode CUDA graph end.", "max_total_num_tokens=",
             "Engine startup timings (s):", "INFO:     Started server process", "Uvicorn running on http://127.0.0.1:",
             '"GET /model_info HTTP/1.1" 200 OK', '"POST /generate HTTP/1.1" 200 OK',
             "The server is fired up and ready to roll!"]
    out = server.output
    positions = [out.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert re.search(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] server_args=ServerArgs\(model_path='/models/test'", out, re.M)
    assert "api_key='sk-secret'" in out  # SGLang prints secrets in this line; the launch module must redact


def test_health_ready_and_open_paths(server):
    assert http("GET", server.url("/health"))[0] == 200
    assert http("GET", server.url("/health_generate"))[0] == 200
    assert http("GET", server.url("/ready"))[0] == 200
    assert http("GET", server.url("/metrics"))[0] == 200


def test_api_key_auth(server):
    status, body, _headers = http("GET", server.url("/v1/models"))
    assert (status, json.loads(body)) == (401, {"error": "Unauthorized"})
    assert http("GET", server.url("/v1/models"), headers={"authorization": "Bearer wrong"})[0] == 401
    status, body, _headers = http("GET", server.url("/v1/models"), headers=AUTH)
    model = json.loads(body)["data"][0]
    assert (status, model["id"], model["owned_by"], model["max_model_len"]) == (200, "/models/test", "sglang", 8192)


def test_model_and_server_info(server):
    info = json.loads(http("GET", server.url("/model_info"), headers=AUTH)[1])
    assert info["architectures"] == ["Qwen2ForCausalLM"] and info["is_generation"] is True
    sinfo = json.loads(http("GET", server.url("/server_info"), headers=AUTH)[1])
    assert sinfo["api_key"] == "sk-secret" and sinfo["version"] == "0.5.23" and sinfo["tp_size"] == 1
    assert "last_gen_throughput" in sinfo["internal_states"][0]
    assert "avg_spec_accept_length" not in sinfo["internal_states"][0]


def test_unknown_path_and_method(server):
    assert http("GET", server.url("/nope"), headers=AUTH)[:2] == (404, b'{"detail":"Not Found"}')
    assert http("DELETE", server.url("/v1/models"), headers=AUTH)[0] == 405


def test_chat_stream_with_usage(server):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name three colours, please."}]
    status, raw, headers = http("POST", server.url("/v1/chat/completions"), {
        "model": "m", "messages": messages, "max_tokens": 12, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}}, headers=AUTH)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"]["content"] or "" for c in chunks if c["choices"])
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["choices"] == [] and chunks[-1]["object"] == "chat.completion.chunk"
    usage = chunks[-1]["usage"]
    assert usage["completion_tokens"] == 12 == tokens.count_text(text)
    assert usage["prompt_tokens"] == tokens.count_chat(messages)
    assert all(c["usage"] is None for c in chunks[:-1])


def test_completion_without_ignore_eos_stops_naturally(server):
    body = {"prompt": "Tell me a story", "max_tokens": 1000, "stream": False}
    result = json.loads(http("POST", server.url("/v1/completions"), body, headers=AUTH)[1])
    choice, usage = result["choices"][0], result["usage"]
    expected = tokens.natural_length(tokens.seed_of("Tell me a story"), 1000)
    assert (choice["finish_reason"], usage["completion_tokens"]) == ("stop", expected)
    assert tokens.count_text(choice["text"]) == expected


def test_completion_stream_and_continuous_usage(server):
    status, raw, _headers = http("POST", server.url("/v1/completions"), {
        "prompt": "count", "max_tokens": 5, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True}}, headers=AUTH)
    chunks = [json.loads(e) for e in sse_events(raw)[:-1]]
    assert status == 200 and len(chunks) == 6
    assert [c["usage"]["completion_tokens"] for c in chunks[:5]] == [1, 2, 3, 4, 5]
    assert chunks[4]["choices"][0]["finish_reason"] == "length"


def test_context_length_is_enforced(server):
    status, raw, _headers = http("POST", server.url("/v1/completions"), {"prompt": "x", "max_tokens": 9000}, headers=AUTH)
    assert status == 400
    assert json.loads(raw)["message"].startswith("Requested token count exceeds the model's maximum context length of 8192")


def test_native_generate_stream_and_batch(server):
    status, raw, _headers = http("POST", server.url("/generate"), {
        "text": "The capital of France is", "sampling_params": {"max_new_tokens": 4, "ignore_eos": True},
        "stream": True}, headers=AUTH)
    events = sse_events(raw)
    outs = [json.loads(e) for e in events[:-1]]
    assert status == 200 and events[-1] == "[DONE]"
    assert [o["meta_info"]["completion_tokens"] for o in outs] == [1, 2, 3, 4]
    assert outs[-1]["text"].startswith(outs[-2]["text"])  # cumulative text
    assert outs[-1]["meta_info"]["finish_reason"] == {"type": "length", "length": 4}
    assert outs[-1]["meta_info"]["prompt_tokens"] == 5 and "e2e_latency" in outs[-1]["meta_info"]
    batch = json.loads(http("POST", server.url("/generate"), {
        "text": ["a", "b c"], "sampling_params": {"max_new_tokens": 3, "ignore_eos": True}}, headers=AUTH)[1])
    assert [b["meta_info"]["completion_tokens"] for b in batch] == [3, 3]
    ids = json.loads(http("POST", server.url("/generate"), {
        "input_ids": [1, 2, 3, 4], "sampling_params": {"max_new_tokens": 2, "ignore_eos": True}}, headers=AUTH)[1])
    assert ids["meta_info"]["prompt_tokens"] == 4


def test_prefix_cache_and_flush(server):
    body = {"prompt": "cache this prompt please", "max_tokens": 2, "ignore_eos": True}
    first = json.loads(http("POST", server.url("/v1/completions"), body, headers=AUTH)[1])["usage"]
    second = json.loads(http("POST", server.url("/v1/completions"), body, headers=AUTH)[1])["usage"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    assert second["prompt_tokens_details"]["cached_tokens"] == 3
    status, raw, _headers = http("POST", server.url("/flush_cache"), headers=AUTH)
    assert status == 200 and raw.decode().startswith("Cache flushed.\nPlease check backend logs")
    third = json.loads(http("POST", server.url("/v1/completions"), body, headers=AUTH)[1])["usage"]
    assert third["prompt_tokens_details"]["cached_tokens"] == 0


def test_metrics_names_and_counters(server):
    def value(text, name):
        return float(re.search(rf"^sglang:{name}\{{[^}}]*\}} (\S+)$", text, re.M).group(1))
    before = http("GET", server.url("/metrics"))[1].decode()
    http("POST", server.url("/v1/completions"), {"prompt": "m", "max_tokens": 7, "ignore_eos": True}, headers=AUTH)
    after = http("GET", server.url("/metrics"))[1].decode()
    assert value(after, "generation_tokens_total") - value(before, "generation_tokens_total") == 7
    for name in ("num_running_reqs", "num_queue_reqs", "token_usage", "gen_throughput", "prompt_tokens_total",
                 "time_to_first_token_seconds_bucket", "inter_token_latency_seconds_count", "e2e_request_latency_seconds_sum"):
        assert f"sglang:{name}{{" in after
    assert 'model_name="/models/test"' in after


# --- servers of their own ----------------------------------------------------------------------------------


def test_metrics_need_the_flag(launch):
    srv = launch().wait_ready()
    assert http("GET", srv.url("/metrics"))[0] == 404


def test_admin_key_guards_flush_cache(launch):
    srv = launch("--api-key", "user", "--admin-api-key", "admin").wait_ready()
    assert http("POST", srv.url("/flush_cache"), headers={"authorization": "Bearer user"})[0] == 401
    assert http("POST", srv.url("/flush_cache"), headers={"authorization": "Bearer admin"})[0] == 200


def test_release_differences_0_5_12(launch):
    srv = launch(settings={"release": "0.5.12"}, module=True).wait_ready()
    out = srv.output
    assert "Init torch distributed begin." in out
    assert "KV Cache is allocated. #tokens: " in out
    assert "Capture cuda graph begin. This can take up to several minutes." in out
    assert "Capture piecewise CUDA graph begin." in out
    assert "UserWarning: 'python -m sglang.launch_server' is still supported" in out
    assert http("GET", srv.url("/ready"))[0] == 404  # /ready arrived in 0.5.20
    assert http("GET", srv.url("/health"))[0] == 200


def test_tp_prefixes_and_spec_lines(launch):
    srv = launch("--tp", "2", "--speculative-algorithm", "NEXTN").wait_ready()
    out = srv.output
    assert re.search(r"^\[[^\]]* TP0\] Load weight begin", out, re.M)
    assert re.search(r"^\[[^\]]* TP1\] Load weight begin", out, re.M)
    assert "Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4" in out
    assert "Max running requests is reset to 48 for speculative decoding." in out


def test_health_is_503_during_warmup_and_port_closed_before(launch):
    # Warmup lasts 0.3 s here: wide enough that a loaded machine still polls inside it.
    srv = launch(settings={"time_scale": "3"})
    srv.wait_for("Load weight begin")
    assert http_refused(srv.url("/health"))
    srv.wait_for("Uvicorn running on")
    statuses = set()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and "ready to roll" not in srv.output:
        statuses.add(http("GET", srv.url("/ready"))[0])
    srv.wait_for("ready to roll")
    statuses.add(http("GET", srv.url("/ready"))[0])
    assert 503 in statuses and 200 in statuses


def http_refused(url):
    try:
        urllib.request.urlopen(url, timeout=2)  # pylint: disable=consider-using-with
    except OSError as err:
        return "refused" in str(err).lower()
    return False


def test_sigterm_drains_streams_and_exits_0(launch):
    srv = launch(settings={"pace_scale": "1"}).wait_ready()
    worker = Stream(srv.url("/v1/completions"), {
        "prompt": "long", "max_tokens": 200, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}}, timeout=20)
    worker.start()
    assert worker.started.wait(WAIT_S)
    srv.proc.send_signal(signal.SIGTERM)
    srv.wait_for("SIGTERM received")
    assert http("GET", srv.url("/health"))[0] == 503
    worker.join(20)
    assert srv.wait_exit() == 0
    events = sse_events(worker.raw)
    assert events[-1] == "[DONE]" and json.loads(events[-2])["usage"]["completion_tokens"] == 200
    assert "SIGTERM received." in srv.output


def test_follower_node_runs_dummy_health(launch):
    rendezvous = f"127.0.0.1:{free_port()}"  # a follower meets its rank 0 there first (tests/standin/test_standin_multinode.py)
    launch("--tp", "2", "--nnodes", "2", "--node-rank", "0", "--dist-init-addr", rendezvous)
    srv = launch("--tp", "2", "--nnodes", "2", "--node-rank", "1", "--dist-init-addr", rendezvous)
    srv.wait_for("Uvicorn running on")
    assert http("GET", srv.url("/health"))[0] == 200
    assert http("GET", srv.url("/v1/models"))[0] == 404
    assert " TP1] Load weight begin" in srv.output and " TP0] Load weight begin" not in srv.output
    assert "ready to roll" not in srv.output
