#!/usr/bin/env python
"""Replay one real SGLang startup log as a systemd unit's process would print it (benchmarks/launch_verdict.py).

Runs on a lab host as the main process of ``sglang-replay.service``. It prints the log's lines to stdout, each
flushed at once (journald splits stdout on newlines, as it does SGLang's), then ends the way the log ended: a failed
start kills itself with SIGKILL, as SGLang's fatal path does (``kill_process_tree`` ends with the parent), and a
successful one answers ``/ready`` and ``/health`` with 200 until it is stopped, as a serving SGLang does.

    REPLAY_LOG=/opt/replay/logs/NNN.log REPLAY_OUTCOME=failed|ready REPLAY_PORT=30100 replay_startup_log.py
"""
import http.server
import os
import signal
import sys


class Ready(http.server.BaseHTTPRequestHandler):
    """200 for the readiness endpoints, 404 for anything else; no access log (it would be more journal lines)."""

    def do_GET(self):  # noqa: N802 (the http.server API)
        status = 200 if self.path in ("/ready", "/health", "/health_generate") else 404
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        return


def main() -> int:
    with open(os.environ["REPLAY_LOG"], "rb") as handle:
        data = handle.read()
    out = sys.stdout.buffer
    for line in data.splitlines():
        out.write(line.rstrip(b"\r") + b"\n")
        out.flush()
    if os.environ.get("REPLAY_OUTCOME", "failed") == "failed":
        os.kill(os.getpid(), signal.SIGKILL)
    server = http.server.HTTPServer(("127.0.0.1", int(os.environ.get("REPLAY_PORT", "30100"))), Ready)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
