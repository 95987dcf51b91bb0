# -*- coding: utf-8 -*-
"""A tiny SGLang-shaped SSE server on 127.0.0.1 with a known pace, for the probe's tests (and its own tests).

It speaks the formats of docs/reference/sglang.md#completions-and-chat-streaming: ``/v1/completions`` and ``/v1/chat/completions`` stream
``data: {json}`` chunks, a final usage chunk with ``choices: []`` when ``stream_options.include_usage`` is set
(usage on every chunk with ``continuous_usage_stats``), then ``data: [DONE]``; native ``/generate`` streams
cumulative text with ``meta_info`` (``spec_verify_ct`` and ``spec_accept_length`` on the final chunk when
speculation is on). HTTP/1.1 keep-alive with chunked transfer encoding, like uvicorn. Tokens follow an absolute
schedule (TTFT, then one chunk every ``tokens_per_chunk / tps`` seconds) so pacing does not drift.

Other test files load this file by path with importlib (test folders are not packages); pytest also collects
its own few tests.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional


class FakeSGLang:
    """A paced SSE server. Use as a context manager; ``url`` is its base URL; ``log`` records requests."""

    def __init__(self, ttft_s: float = 0.01, tps: float = 500.0, tokens_per_chunk: int = 1, spaced_json: bool = False,
                 api_key: Optional[str] = None, fail_status: Optional[int] = None, accept_length: Optional[float] = None,
                 metrics: bool = False, server_info: Optional[Dict[str, Any]] = None, fail_after: Optional[int] = None) -> None:
        self.ttft_s = ttft_s
        self.tps = tps
        self.tokens_per_chunk = tokens_per_chunk
        self.spaced_json = spaced_json
        self.api_key = api_key
        self.fail_status = fail_status
        self.accept_length = accept_length
        self.metrics = metrics
        self.server_info = server_info
        self.fail_after = fail_after
        self.log: List[Dict[str, Any]] = []
        self.connections = 0
        self.generated = 0
        self.verify_calls = 0
        self.lock = threading.Lock()
        self.httpd: Optional[ThreadingHTTPServer] = None

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def dumps(self, obj: Any) -> bytes:
        if self.spaced_json:
            return json.dumps(obj).encode()
        return json.dumps(obj, separators=(",", ":")).encode()

    def __enter__(self) -> "FakeSGLang":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as uvicorn (asyncio sets TCP_NODELAY): no 40 ms delayed-ACK stalls

            def setup(self) -> None:
                super().setup()
                with fake.lock:
                    fake.connections += 1

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def _send_json(self, status: int, obj: Any) -> None:
                body = fake.dumps(obj)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _authorised(self) -> bool:
                if fake.api_key and self.headers.get("Authorization") != "Bearer " + fake.api_key:
                    self._send_json(401, {"error": "Unauthorized"})
                    return False
                return True

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/v1/models":
                    self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                elif self.path == "/server_info":
                    info = fake.server_info or {"version": "0.5.23-fake", "tp_size": 2, "api_key": fake.api_key,
                                                "model_path": "/nonexistent/fake-model", "served_model_name": "fake-model",
                                                "internal_states": [{"last_gen_throughput": 1.0}]}
                    self._send_json(200, info)
                elif self.path == "/metrics" and fake.metrics:
                    text = ('# HELP sglang:spec_verify_calls_total x\nsglang:spec_verify_calls_total{model_name="m",tp_rank="0"} %d\n'
                            'sglang:spec_verify_calls_total{model_name="m",tp_rank="1"} %d\n'
                            'sglang:generation_tokens_total{model_name="m"} %d\n') % (fake.verify_calls, fake.verify_calls, fake.generated)
                    body = text.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self._send_json(404, {"detail": "Not Found"})

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                arrived = time.perf_counter()
                with fake.lock:
                    fake.log.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                    count = len(fake.log)
                if not self._authorised():
                    return
                if fake.fail_status or (fake.fail_after is not None and count > fake.fail_after):
                    self._send_json(fake.fail_status or 500, {"object": "error", "message": "injected failure", "code": fake.fail_status or 500})
                    return
                if self.path == "/generate":
                    n = int(body["sampling_params"]["max_new_tokens"])
                else:
                    n = int(body["max_tokens"])
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                options = body.get("stream_options") or {}
                continuous = bool(options.get("continuous_usage_stats"))
                sent = 0
                text = ""
                per = max(1, fake.tokens_per_chunk)
                if self.path == "/v1/chat/completions":
                    self._chunk(b"data: " + fake.dumps({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}], "usage": None}) + b"\n\n")
                while sent < n:
                    step = min(per, n - sent)
                    due = arrived + fake.ttft_s + (sent + step - 1) / fake.tps
                    delay = due - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                    sent += step
                    piece = " tok" * step
                    text += piece
                    usage = {"prompt_tokens": 7, "completion_tokens": sent, "total_tokens": 7 + sent}
                    if self.path == "/generate":
                        meta = {"id": "r", "prompt_tokens": 7, "completion_tokens": sent, "finish_reason": None}
                        if sent == n:
                            meta["finish_reason"] = {"type": "length", "length": n}
                            if fake.accept_length:
                                meta["spec_verify_ct"] = int(round(n / fake.accept_length))
                                meta["spec_accept_length"] = n / meta["spec_verify_ct"]
                        obj: Dict[str, Any] = {"text": text, "meta_info": meta}
                    elif self.path == "/v1/chat/completions":
                        obj = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                               "usage": usage if continuous else None}
                    else:
                        obj = {"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": piece, "logprobs": None, "finish_reason": None}],
                               "usage": usage if continuous else None}
                    self._chunk(b"data: " + fake.dumps(obj) + b"\n\n")
                with fake.lock:
                    fake.generated += n
                    if fake.accept_length:
                        fake.verify_calls += int(round(n / fake.accept_length))
                if self.path != "/generate" and options.get("include_usage"):
                    final = {"id": "c", "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": n, "total_tokens": 7 + n}}
                    self._chunk(b"data: " + fake.dumps(final) + b"\n\n")
                self._chunk(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def posts(self, path: Optional[str] = None) -> List[Dict[str, Any]]:
        """Logged POST requests, optionally for one path."""
        return [entry for entry in self.log if path is None or entry["path"] == path]


# --- the fake's own checks (it is a measuring stick for the probe, so it must be right) ---------------------

def _raw_stream(url: str, path: str, body: Dict[str, Any]) -> List[bytes]:
    import http.client  # pylint: disable=import-outside-toplevel
    host, port = url.replace("http://", "").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    data = conn.getresponse().read()
    conn.close()
    return [line for line in data.split(b"\n") if line.startswith(b"data: ")]


def test_fake_streams_openai_completions_with_usage_and_done():
    with FakeSGLang(tps=2000.0) as fake:
        lines = _raw_stream(fake.url, "/v1/completions", {"max_tokens": 3, "stream": True, "stream_options": {"include_usage": True}})
    assert lines[-1] == b"data: [DONE]"
    final = json.loads(lines[-2][6:])
    assert final["choices"] == [] and final["usage"]["completion_tokens"] == 3
    assert [json.loads(line[6:])["choices"][0]["text"] for line in lines[:3]] == [" tok"] * 3


def test_fake_generate_reports_spec_stats_on_the_final_chunk():
    with FakeSGLang(tps=2000.0, accept_length=2.0) as fake:
        lines = _raw_stream(fake.url, "/generate", {"text": "x", "stream": True, "sampling_params": {"max_new_tokens": 4}})
    final = json.loads(lines[-2][6:])
    assert final["meta_info"]["completion_tokens"] == 4
    assert final["meta_info"]["spec_verify_ct"] == 2
