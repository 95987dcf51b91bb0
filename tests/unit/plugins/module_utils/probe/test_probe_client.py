# -*- coding: utf-8 -*-
"""probe_client against a paced in-test SSE server on 127.0.0.1: streaming, keep-alive, auth, errors.

No timing is asserted beyond order (the accuracy figures are benchmarks/probe_accuracy.py's job).
"""

from __future__ import annotations

import importlib.util
import json
import socket
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.client import ProbeClient, ProbeHTTPError, _LineSplitter
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.metrics import level_metrics
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import COMPACT_MARK, parse_chunk, timing_from_capture

_SPEC = importlib.util.spec_from_file_location("probe_fakeserver_client", str(Path(__file__).with_name("test_probe_fakeserver.py")))
_FAKE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_FAKE)
FakeSGLang = _FAKE.FakeSGLang


def body(n=8, **extra):
    payload = {"model": "fake-model", "prompt": "def f():", "max_tokens": n, "stream": True, "ignore_eos": True,
               "stream_options": {"include_usage": True}}
    payload.update(extra)
    return json.dumps(payload).encode()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_stream_records_every_data_line_in_arrival_order():
    with FakeSGLang(tps=5000.0) as fake:
        client = ProbeClient(fake.url)
        conn = client.connection()
        cap, reusable = client.stream(conn, "/v1/completions", body(5))
        conn.close()
    assert cap.status == 200 and cap.error is None and reusable
    assert len(cap.events) == 5 + 1 + 1  # tokens, usage chunk, [DONE]
    assert cap.events[-1][1] == b"[DONE]"
    times = [t for t, _payload in cap.events]
    assert times == sorted(times) and times[0] >= cap.start
    timing = timing_from_capture(cap, "completions", 5)
    assert timing.ok and timing.output_tokens == 5 and len(timing.itl) == 4


def test_run_level_keeps_one_connection_per_worker_and_body_order():
    with FakeSGLang(tps=5000.0) as fake:
        client = ProbeClient(fake.url)
        bodies = [body(3, prompt="p%d" % i) for i in range(8)]
        captures, duration = client.run_level("/v1/completions", bodies, 2)
        assert fake.connections == 2  # persistent: 8 requests over 2 connections
        sent = sorted(json.loads(b)["prompt"] for b in bodies)
        assert sorted(entry["body"]["prompt"] for entry in fake.posts()) == sent
    assert len(captures) == 8 and all(c.status == 200 for c in captures)
    assert duration > 0
    assert duration >= max(c.end - c.start for c in captures)


def test_per_request_mode_opens_a_connection_for_every_request_and_times_it():
    with FakeSGLang(tps=5000.0) as fake:
        client = ProbeClient(fake.url)
        captures, _duration = client.run_level("/v1/completions", [body(3, prompt="p%d" % i) for i in range(6)], 2, "per-request")
        assert fake.connections == 6
    assert all(c.connect_s is not None and 0 < c.connect_s < c.events[0][0] - c.start for c in captures)
    timings = [timing_from_capture(c, "completions", 3) for c in captures]
    assert all(t.ok and t.connect == c.connect_s and t.ttft > t.connect for t, c in zip(timings, captures))
    assert level_metrics(timings, 1.0, 2)["connect_ms"]["p50"] > 0


def test_keep_alive_mode_times_each_connection_once_before_the_level():
    with FakeSGLang(tps=5000.0) as fake:
        captures, _duration = ProbeClient(fake.url).run_level("/v1/completions", [body(3) for _i in range(6)], 2, "keep-alive")
        assert fake.connections == 2
    timed = [c for c in captures if c.connect_s is not None]
    assert len(timed) == 2 and all(c.connect_s > 0 for c in timed)


def sse(obj):
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def test_long_lines_are_kept_as_head_and_tail_and_parse_the_same():
    text = " tok" * 5000                                  # a native /generate chunk far into a long answer
    meta = {"id": "x", "prompt_tokens": 812, "completion_tokens": 5000, "spec_verify_ct": 1750, "spec_accept_length": 2.857}
    long_line = sse({"text": text, "output_ids": list(range(5000)), "meta_info": meta})
    stream = sse({"text": " tok", "meta_info": {"completion_tokens": 1}}) + b": keep-alive\n\n" + long_line + b"data: [DONE]\n\n"
    for size in (len(stream), 7, 4096, 9000):             # however the socket splits it
        splitter = _LineSplitter()
        payloads = []
        for i in range(0, len(stream), size):
            payloads += splitter.feed(stream[i:i + size])
        assert payloads[0] == b'{"text":" tok","meta_info":{"completion_tokens":1}}' and payloads[-1] == b"[DONE]"
        assert len(payloads) == 3 and COMPACT_MARK in payloads[1] and len(payloads[1]) < 4500
        assert parse_chunk(payloads[1], "generate") == {"text": True, "completion": 5000, "prompt": 812, "spec_verify_ct": 1750,
                                                        "spec_accept_length": 2.857}
        assert parse_chunk(long_line[6:-2], "generate") == parse_chunk(payloads[1], "generate")


def test_a_long_native_stream_times_exactly():
    with FakeSGLang(tps=50000.0, accept_length=2.0) as fake:
        client = ProbeClient(fake.url)
        payload = json.dumps({"text": "p", "stream": True, "sampling_params": {"max_new_tokens": 3000, "ignore_eos": True}}).encode()
        captures, _duration = client.run_level("/generate", [payload], 1)
    timing = timing_from_capture(captures[0], "generate", 3000)
    assert timing.ok and timing.output_tokens == 3000 and len(timing.itl) == 2999
    assert timing.spec_accept_length == 2.0


def test_api_key_is_sent_as_bearer_and_redacted_from_errors():
    with FakeSGLang(api_key="s3cret-key") as fake:
        good = ProbeClient(fake.url, api_key="s3cret-key")
        cap, _reusable = good.stream(good.connection(), "/v1/completions", body(2))
        assert cap.status == 200
        assert fake.posts()[0]["auth"] == "Bearer s3cret-key"
        bad = ProbeClient(fake.url, api_key="wrong")
        cap, _reusable = bad.stream(bad.connection(), "/v1/completions", body(2))
    assert cap.status == 401 and cap.error.startswith("HTTP 401 from /v1/completions")
    assert bad.redact("echo wrong here") == "echo ******** here"


def test_http_errors_and_refused_connections_are_reported_not_raised():
    with FakeSGLang(fail_status=503) as fake:
        client = ProbeClient(fake.url)
        captures, _duration = client.run_level("/v1/completions", [body(2)], 1)
    assert captures[0].status == 503 and "injected failure" in captures[0].error
    client = ProbeClient("http://127.0.0.1:%d" % free_port(), timeout=2.0)
    captures, _duration = client.run_level("/v1/completions", [body(2)], 1)
    assert captures[0].status == 0 and "ConnectionRefusedError" in captures[0].error
    with pytest.raises(ProbeHTTPError, match="GET /v1/models"):
        client.get_json("/v1/models")


def test_silent_server_hits_the_timeout():
    with FakeSGLang(ttft_s=1.5) as fake:
        client = ProbeClient(fake.url, timeout=0.3)
        cap, reusable = client.stream(client.connection(), "/v1/completions", body(2))
    assert not reusable and "timeout" in cap.error


def test_get_json_and_base_url_forms():
    with FakeSGLang() as fake:
        client = ProbeClient(fake.url + "/")
        assert client.get_json("/v1/models")["data"][0]["id"] == "fake-model"
        assert client.get_json("/nope") is None
        status, _body = client.post_json("/v1/completions", {"max_tokens": 1, "stream": True})
        assert status == 200
    assert ProbeClient("127.0.0.1:30000").port == 30000
    assert ProbeClient("https://gpu1.example:8443/sglang").prefix == "/sglang"
    with pytest.raises(ValueError):
        ProbeClient("ftp://x")
