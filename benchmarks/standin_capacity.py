#!/usr/bin/env python
"""Capacity of the SGLang stand-in: aggregate tokens/s and pace error at 16 streams, on one core.

Starts the stand-in from this checkout (tools/standins/sglang/src) pinned to one CPU, with a
throwaway profile that decodes ``--tok-s`` tokens/s per stream and does not slow
down with batch size, opens ``--streams`` concurrent streaming completions with
``ignore_eos`` and ``stream_options.include_usage``, and prints one JSON object:
achieved aggregate tokens/s against the profile's, the per-stream decode pace error,
TTFT, the server's CPU use (fraction of one core) and its memory (RSS).

    benchmarks/standin_capacity.py [--streams 16] [--tok-s 312.5] [--tokens 1500] [--python PYTHON]
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tools" / "standins" / "sglang" / "src"


def free_port() -> int:
    """An ephemeral port on loopback that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_profile(folder: Path, tok_s: float) -> Path:
    """A profile with a flat decode rate, instant prefill and near-instant startup."""
    profile = {
        "name": "capacity-bench", "description": "benchmark profile",
        "gpu": {"name": "bench", "count": 1, "memory_gib": 80.0, "link": "none", "p2p": True, "graph_reserve_gib": 0.5},
        "model": {"architecture": "Qwen2ForCausalLM", "weights_gib": 1.0, "kv_bytes_per_token": 4096,
                  "context_length": 65536, "multimodal": False, "eos_token_id": 2},
        "defaults": {"attention_backend": "flashinfer", "mem_fraction_static": 0.85},
        "pace": {"decode_tok_s": tok_s, "prefill_tok_s": 1e7, "ttft_overhead_s": 0.005, "batch_slowdown": 0.0, "jitter": 0.0},
        "startup_s": {"init": 0.01, "load": 0.01, "kv": 0.01, "graph_decode": 0.01, "warmup": 0.01},
        "flag_effects": [],
    }
    path = folder / "capacity.json"
    path.write_text(json.dumps(profile), encoding="utf-8")
    return path


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kib(pid: int) -> dict:
    """VmRSS and VmHWM (peak) in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, value = line.split(":", 1)
            out[key] = int(value.split()[0])
    return out


def wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Poll /health until 200 (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"stand-in exited early with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("stand-in did not become healthy in time")


def chunks(buf: bytes) -> tuple:
    """Split complete HTTP chunks off ``buf``: (payloads, rest, ended). Each chunk carries one SSE event."""
    payloads = []
    while True:
        eol = buf.find(b"\r\n")
        if eol < 0:
            return payloads, buf, False
        size = int(buf[:eol], 16)
        if len(buf) < eol + 2 + size + 2:
            return payloads, buf, False
        payload, buf = buf[eol + 2:eol + 2 + size], buf[eol + 2 + size + 2:]
        if size == 0:
            return payloads, buf, True
        payloads.append(payload)


async def one_stream(port: int, tokens: int, index: int) -> dict:
    """One streaming completion; returns its timings and the server-reported token count."""
    body = json.dumps({"model": "bench", "prompt": f"stream {index} says hello", "max_tokens": tokens,
                       "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}).encode()
    out = {"start": time.perf_counter(), "first": None, "last": None, "chunks": 0, "completion_tokens": None}
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /v1/completions HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
                 b"content-length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")
    buf, ended = b"", False
    while not ended:
        data = await reader.read(65536)
        if not data:
            break
        payloads, buf, ended = chunks(buf + data)
        now = time.perf_counter()
        for payload in payloads:
            if b'"usage":{' in payload:
                out["completion_tokens"] = json.loads(payload[6:])["usage"]["completion_tokens"]
            if b'"text":" ' in payload:  # a chunk with generated text (the usage chunk has none)
                out["chunks"] += 1
                out["first"] = out["first"] or now
                out["last"] = now
    writer.close()
    return out


async def run_streams(port: int, streams: int, tokens: int) -> list:
    """All streams at once."""
    return await asyncio.gather(*(one_stream(port, tokens, i) for i in range(streams)))


def measure(opts: argparse.Namespace, cpus: list) -> dict:
    """Start the stand-in pinned to one CPU, run the streams from the others, stop it; raw numbers."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(SRC), "SGLANG_STANDIN_PROFILE": str(write_profile(Path(tmp), opts.tok_s)),
               "SGLANG_STANDIN_TIME_SCALE": "0.01", "SGLANG_STANDIN_PACE_SCALE": "1", "SGLANG_STANDIN_RELEASE": "0.5.23"}
        cmd = [opts.python, "-c", "import sys; from sglang.cli.main import main; sys.argv[0] = 'sglang'; main()",
               "serve", "--model-type", "llm", "--model-path", "/models/bench", "--port", str(port),
               "--max-running-requests", str(max(opts.streams, 1))]
        with open(Path(tmp) / "server.log", "wb") as log, \
                subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT) as proc:
            try:
                os.sched_setaffinity(proc.pid, {cpus[0]})  # the server gets one core
                wait_healthy(port, proc)
                if len(cpus) > 1:
                    os.sched_setaffinity(0, set(cpus[1:]))
                cpu0, wall0 = cpu_seconds(proc.pid), time.perf_counter()
                results = asyncio.run(run_streams(port, opts.streams, opts.tokens))
                cpu1, wall1 = cpu_seconds(proc.pid), time.perf_counter()
                mem = memory_kib(proc.pid)
            finally:
                proc.terminate()
                status = proc.wait(timeout=30)
    return {"results": results, "cpu_fraction": (cpu1 - cpu0) / (wall1 - wall0), "mem": mem, "status": status}


def report(opts: argparse.Namespace, raw: dict, cpu: int) -> dict:
    """The JSON figures: aggregate and per-stream pace against the profile, CPU and memory."""
    results = raw["results"]
    tokens_total = sum(r["completion_tokens"] or 0 for r in results)
    span = max(r["last"] for r in results) - min(r["start"] for r in results)
    rates = [(r["completion_tokens"] - 1) / (r["last"] - r["first"]) for r in results if r["last"] > r["first"]]
    ttfts = [r["first"] - r["start"] for r in results]
    expected = opts.streams * opts.tokens / (statistics.mean(ttfts) + (opts.tokens - 1) / opts.tok_s)
    aggregate = tokens_total / span
    return {
        "streams": opts.streams, "tokens_per_stream": opts.tokens, "profile_stream_tok_s": opts.tok_s,
        "target_aggregate_tok_s": opts.streams * opts.tok_s,
        "achieved_aggregate_tok_s": round(aggregate, 1),
        "expected_aggregate_tok_s": round(expected, 1),
        "aggregate_pace_error": round(aggregate / expected - 1, 4),
        "stream_decode_tok_s_mean": round(statistics.mean(rates), 2),
        "stream_decode_pace_error_mean": round(statistics.mean(rates) / opts.tok_s - 1, 4),
        "stream_decode_pace_error_max": round(max(abs(r / opts.tok_s - 1) for r in rates), 4),
        "exact_token_counts": all(r["completion_tokens"] == opts.tokens for r in results),
        "chunks_per_stream_min": min(r["chunks"] for r in results),
        "ttft_s_mean": round(statistics.mean(ttfts), 4),
        "server_cpu_fraction_of_one_core": round(raw["cpu_fraction"], 3),
        "server_rss_mib": round(raw["mem"].get("VmRSS", 0) / 1024, 1),
        "server_peak_rss_mib": round(raw["mem"].get("VmHWM", 0) / 1024, 1),
        "server_pinned_to_cpu": cpu, "sigterm_exit_status": raw["status"], "python": opts.python,
    }


def main() -> None:
    """Run the benchmark and print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=16)
    parser.add_argument("--tok-s", type=float, default=312.5, help="decode tokens/s per stream in the profile")
    parser.add_argument("--tokens", type=int, default=1500, help="completion tokens per stream")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the stand-in")
    opts = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    print(json.dumps(report(opts, measure(opts, cpus), cpus[0]), indent=1), flush=True)


if __name__ == "__main__":
    main()
