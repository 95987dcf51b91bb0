#!/usr/bin/env python
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Steady streamed load through a gateway, counting every request that failed and every stream that was cut.

Used by the Molecule scenario ``gateway`` (it runs in the background for the whole scenario) and by
``benchmarks/rollout_under_load.py``. Each of ``--streams`` threads sends one streamed completion after another
(``ignore_eos``, ``--tokens`` tokens, so a whole answer is known in advance) until ``--stop-file`` exists or
``--duration`` passes, then the JSON result goes to ``--out``:

- ``sent``: requests sent; ``ok``: answered 200 with every token and ``[DONE]``;
- ``failed``: no 200 (connection refused or reset before the answer, an HTTP error, a timeout);
- ``cut``: answered 200 but the stream ended before ``[DONE]`` or with fewer tokens than asked;
- ``requests``: per request ``[start (epoch s), ttft_s or null, outcome]``, for figures by time window;
- ``errors``: the first 20 failures' texts.

Standard library only; a result is written even when interrupted (SIGTERM/SIGINT).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import sys
import threading
import time
from typing import Any, Dict, List
from urllib.parse import urlsplit


def one_request(host: str, port: int, body: bytes, tokens: int, headers: Dict[str, str], timeout: float) -> Dict[str, Any]:
    """One streamed completion; its outcome (ok, failed, cut), TTFT and an error text."""
    start = time.time()
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    ttft = None
    try:
        conn.request("POST", "/v1/completions", body=body, headers=headers)
        answer = conn.getresponse()
        if answer.status != 200:
            text = answer.read()[:300].decode("utf-8", "replace")
            return {"start": start, "ttft": None, "outcome": "failed", "error": "HTTP %d: %s" % (answer.status, text)}
        chunks, done, buffer = 0, False, b""
        while True:
            data = answer.read1(65536) if hasattr(answer, "read1") else answer.read(65536)
            if not data:
                break
            buffer += data
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                payload = event.strip()
                if not payload.startswith(b"data:"):
                    continue
                payload = payload[5:].strip()
                if payload == b"[DONE]":
                    done = True
                    continue
                try:
                    choice = (json.loads(payload).get("choices") or [{}])[0]
                except ValueError:
                    continue
                if choice.get("text"):
                    chunks += 1
                    if ttft is None:
                        ttft = time.time() - start
        if done and chunks >= tokens:
            return {"start": start, "ttft": ttft, "outcome": "ok"}
        return {"start": start, "ttft": ttft, "outcome": "cut",
                "error": "stream ended after %d of %d tokens%s" % (chunks, tokens, "" if done else ", no [DONE]")}
    except (OSError, http.client.HTTPException) as err:
        outcome = "cut" if ttft is not None else "failed"
        return {"start": start, "ttft": ttft, "outcome": outcome, "error": "%s: %s" % (type(err).__name__, err)}
    finally:
        conn.close()


def main(argv: List[str]) -> int:
    """Run the load until stopped; write the result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the gateway, http://HOST:PORT")
    parser.add_argument("--model", default="default")
    parser.add_argument("--api-key", default=os.environ.get("STREAM_LOAD_API_KEY", ""))
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between a thread's requests")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--duration", type=float, default=3600.0)
    parser.add_argument("--stop-file", default="")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    parts = urlsplit(args.url)
    headers = {"Content-Type": "application/json"}
    if args.api_key:
        headers["Authorization"] = "Bearer " + args.api_key
    body = json.dumps({"model": args.model, "prompt": "Tell a long story about the sea.", "max_tokens": args.tokens,
                       "ignore_eos": True, "stream": True}).encode()
    stop = threading.Event()
    results: List[Dict[str, Any]] = []
    lock = threading.Lock()
    started = time.time()

    def worker() -> None:
        while not stop.is_set():
            outcome = one_request(parts.hostname, parts.port or 80, body, args.tokens, headers, args.timeout)
            with lock:
                results.append(outcome)
            stop.wait(args.pause)

    def write() -> None:
        with lock:
            done = list(results)
        counts = {k: sum(1 for r in done if r["outcome"] == k) for k in ("ok", "failed", "cut")}
        report = {"url": args.url, "streams": args.streams, "tokens": args.tokens, "started": started,
                  "ended": time.time(), "sent": len(done), **counts,
                  "errors": [r["error"] for r in done if r.get("error")][:20],
                  "requests": [[round(r["start"], 3), None if r["ttft"] is None else round(r["ttft"], 4), r["outcome"]]
                               for r in done]}
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(report, handle)
        os.replace(tmp, args.out)

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threads = [threading.Thread(target=worker, daemon=True) for _number in range(args.streams)]
    for thread in threads:
        thread.start()
    while not stop.is_set():
        if args.stop_file and os.path.exists(args.stop_file) or time.time() - started >= args.duration:
            stop.set()
        stop.wait(0.2)
    for thread in threads:
        thread.join(args.timeout + 5)
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
