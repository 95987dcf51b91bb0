#!/usr/bin/env python
"""Capacity of the probe's client: streamed tokens per second that one core reads, timestamps and parses.

A synthetic SSE server in a child process sends prebuilt SGLang-shaped streams as fast as the socket takes them:
each event is one HTTP chunk, as uvicorn writes them, and each carries one token with usage on every chunk
(``continuous_usage_stats``, the probe's default and the heaviest chunk shape). The client runs the probe's own
code path (``ProbeClient.run_level`` with one thread per stream, then ``timing_from_capture`` for every request)
pinned to one CPU while the server is pinned to another. Printed as one JSON object per run:

- ``tokens_per_cpu_s``: tokens / CPU seconds the client process used (reading, timestamping and parsing);
- ``tokens_per_wall_s``: tokens / wall seconds on the pinned core (a lower bound: the server may be the limit);
- ``ratio_to_requirement``: ``tokens_per_cpu_s`` / 20,000 (the issue's floor); ratios, not raw seconds, decide.

Native ``/generate`` streams the cumulative text in every chunk, so its bytes per token grow with the output
length; it is measured at the probe's default output length (256) and at ``--tokens``.

    benchmarks/probe_capacity.py [--tokens 4000] [--streams 1,16] [--endpoints completions,chat,generate]
"""

import argparse
import json
import multiprocessing
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENT = 20000.0


def import_collection():
    """Make ``ansible_collections.gpufleet.sglang`` importable from this checkout (a throwaway symlink tree)."""
    tree = Path(tempfile.mkdtemp(prefix="probe-bench-"))
    (tree / "ansible_collections" / "gpufleet").mkdir(parents=True)
    (tree / "ansible_collections" / "gpufleet" / "sglang").symlink_to(ROOT)
    sys.path.insert(0, str(tree))


def build_stream(endpoint: str, tokens: int) -> bytes:
    """One whole chunked HTTP response body: SSE events shaped like SGLang 0.5.23's, one per HTTP chunk."""
    events = []
    text = ""
    for i in range(1, tokens + 1):
        usage = {"prompt_tokens": 812, "total_tokens": 812 + i, "completion_tokens": i, "prompt_tokens_details": None, "reasoning_tokens": 0}
        if endpoint == "generate":
            text += " tok"
            obj = {"text": text, "output_ids": [], "meta_info": {"id": "2f1c0e8a9b7d4c6e", "finish_reason": None, "prompt_tokens": 812,
                                                                 "completion_tokens": i, "cached_tokens": 0}}
        elif endpoint == "chat":
            obj = {"id": "2f1c0e8a9b7d4c6e", "object": "chat.completion.chunk", "created": 1796030148, "model": "qwen35-27b",
                   "choices": [{"index": 0, "delta": {"role": None, "content": " token", "reasoning_content": None, "tool_calls": None},
                                "logprobs": None, "finish_reason": None, "matched_stop": None}], "usage": usage}
        else:
            obj = {"id": "2f1c0e8a9b7d4c6e", "object": "text_completion", "created": 1796030148, "model": "qwen35-27b",
                   "choices": [{"index": 0, "text": " token", "logprobs": None, "finish_reason": None, "matched_stop": None}], "usage": usage}
        events.append(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")
    if endpoint != "generate":
        final = {"id": "2f1c0e8a9b7d4c6e", "object": "text_completion", "choices": [], "usage": {"prompt_tokens": 812, "completion_tokens": tokens}}
        events.append(b"data: " + json.dumps(final, separators=(",", ":")).encode() + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"


def serve(port_queue, bodies, cpu):
    """The synthetic server: keep-alive HTTP/1.1, answers every POST with the prebuilt stream for its path."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    import threading  # pylint: disable=import-outside-toplevel
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port_queue.put(listener.getsockname()[1])

    def handle(conn):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                header, _sep, rest = buf.partition(b"\r\n\r\n")
                length = 0
                for line in header.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                while len(rest) < length:
                    rest += conn.recv(65536)
                buf = rest[length:]
                path = header.split(b" ", 2)[1].decode()
                tokens = json.loads(rest[:length])["max_tokens"]
                conn.sendall(head + bodies["%s?%d" % (path, tokens)])

    while True:
        conn, _addr = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def measure(endpoint: str, tokens: int, streams: int, port: int):
    """Run one level through the probe's client and parser; returns the figures of this run."""
    from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.client import ProbeClient  # pylint: disable=import-outside-toplevel
    from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import ENDPOINTS, timing_from_capture  # pylint: disable=import-outside-toplevel
    client = ProbeClient("http://127.0.0.1:%d" % port, timeout=60.0)
    body = b'{"model":"m","prompt":"x","max_tokens":%d,"stream":true,"ignore_eos":true}' % tokens
    requests = streams * 2
    cpu0, wall0 = time.process_time(), time.perf_counter()
    captures, _elapsed = client.run_level(ENDPOINTS[endpoint], [body] * requests, streams)
    read_cpu = time.process_time() - cpu0
    timings = [timing_from_capture(c, endpoint, tokens) for c in captures]
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    parsed = sum(t.output_tokens for t in timings if t.ok)
    assert parsed == tokens * requests, "the client lost tokens: %d of %d" % (parsed, tokens * requests)
    return {"endpoint": endpoint, "tokens_per_request": tokens, "streams": streams, "requests": requests, "tokens": parsed,
            "client_cpu_s": round(cpu, 4), "read_cpu_s": round(read_cpu, 4), "parse_cpu_s": round(cpu - read_cpu, 4),
            "tokens_per_cpu_s": round(parsed / cpu), "tokens_per_wall_s": round(parsed / wall),
            "ratio_to_requirement": round(parsed / cpu / REQUIREMENT, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tokens", type=int, default=4000, help="tokens per request")
    parser.add_argument("--streams", default="1,16", help="concurrent streams to measure, comma-separated")
    parser.add_argument("--endpoints", default="completions,chat,generate")
    args = parser.parse_args()
    import_collection()
    endpoints = args.endpoints.split(",")
    cases = []
    for endpoint in endpoints:
        for tokens in ([256, args.tokens] if endpoint == "generate" else [args.tokens]):
            cases.append((endpoint, tokens))
    paths = {"completions": "/v1/completions", "chat": "/v1/chat/completions", "generate": "/generate"}
    bodies = {"%s?%d" % (paths[e], n): build_stream(e, n) for e, n in cases}
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    client_cpu = cpus[0] if cpus else None
    server_cpu = cpus[1] if len(cpus) > 1 else None
    queue = multiprocessing.get_context("fork").Queue()
    server = multiprocessing.get_context("fork").Process(target=serve, args=(queue, bodies, server_cpu), daemon=True)
    server.start()
    port = queue.get(timeout=30)
    if client_cpu is not None:
        os.sched_setaffinity(0, {client_cpu})
    runs = []
    try:
        for endpoint, tokens in cases:
            for streams in [int(s) for s in args.streams.split(",")]:
                runs.append(measure(endpoint, tokens, streams, port))
    finally:
        server.terminate()
    worst = min(r["tokens_per_cpu_s"] for r in runs)
    print(json.dumps({
        "benchmark": "probe_capacity",
        "requirement_tokens_per_s_one_core": REQUIREMENT,
        "client_pinned_cpu": client_cpu, "server_pinned_cpu": server_cpu,
        "python": sys.version.split()[0],
        "runs": runs,
        "worst_tokens_per_cpu_s": worst,
        "worst_ratio_to_requirement": round(worst / REQUIREMENT, 2),
        "pass": worst >= REQUIREMENT,
    }, indent=2))
    return 0 if worst >= REQUIREMENT else 1


if __name__ == "__main__":
    sys.exit(main())
