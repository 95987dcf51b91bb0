"""Shared helpers for the stand-in tests (a uniquely named module, so other test folders' conftest files cannot shadow it).

The tests import the stand-in from the checkout (``tools/standins/sglang/src`` is put first
on ``sys.path`` here and on ``PYTHONPATH`` of every server they start), so they run
with or without the package installed. Servers listen on loopback, on ports the OS
hands out, with every simulated duration scaled down; every wait is bounded.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "tools" / "standins" / "sglang" / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

ENTRY = "import sys; from sglang.cli.main import main; sys.argv[0] = 'sglang'; main()"
WAIT_S = 15.0


def free_port() -> int:
    """A loopback port that is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def standin_env(**settings: str) -> Dict[str, str]:
    """A clean environment: no inherited stand-in settings, fast test profile, scaled time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    env.update(PYTHONPATH=str(SRC), PYTHONUNBUFFERED="1", SGLANG_STANDIN_PROFILE="test-fast",
               SGLANG_STANDIN_TIME_SCALE="0.01", SGLANG_STANDIN_RELEASE="0.5.23")
    env.update({k if k.startswith("SGLANG_") else "SGLANG_STANDIN_" + k.upper(): str(v) for k, v in settings.items()})
    return env


class Server:
    """A stand-in process with its output collected line by line."""

    def __init__(self, args: List[str], env: Dict[str, str], port: int, module: bool = False):
        self.port = port
        head = [sys.executable, "-m", "sglang.launch_server"] if module else [sys.executable, "-c", ENTRY, "serve"]
        # pylint: disable-next=consider-using-with  # the process lives as long as this object
        self.proc = subprocess.Popen(head + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: List[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        """Everything printed so far."""
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = WAIT_S) -> str:
        """Wait for a line matching ``pattern`` (regex); fail with the output if it never comes."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if regex.search(line):
                    return line
            if self.proc.poll() is not None:
                self._reader.join(2)
                for line in self.lines:
                    if regex.search(line):
                        return line
                break
            time.sleep(0.01)
        raise AssertionError(f"no line matching {pattern!r}; exit={self.proc.poll()}; output:\n{self.output}")

    def wait_ready(self) -> "Server":
        """Until the ready line."""
        self.wait_for("The server is fired up and ready to roll!")
        return self

    def wait_exit(self, timeout: float = WAIT_S) -> int:
        """Exit status (negative: killed by that signal)."""
        code = self.proc.wait(timeout=timeout)
        self._reader.join(2)
        return code

    def url(self, path: str) -> str:
        """Full URL of ``path`` on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._reader.join(2)


def http(method: str, url: str, body: Optional[dict] = None, headers: Optional[dict] = None, timeout: float = 10.0):
    """(status, body bytes, headers) of one request; HTTP errors are answers, not exceptions."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read(), dict(err.headers)


def sse_events(raw: bytes) -> List[str]:
    """Split an SSE body into its ``data:`` payloads, checking the framing on the way."""
    text = raw.decode()
    assert text.endswith("\n\n"), text[-200:]
    events = text.split("\n\n")[:-1]
    for event in events:
        assert event.startswith("data: "), event
    return [event[len("data: "):] for event in events]


class Stream(threading.Thread):
    """A streamed request in its own thread: ``started`` is set once its first chunk arrived (the server is running
    it), ``raw`` holds the whole body at the end. Tests wait on it instead of sleeping a guessed while."""

    def __init__(self, url: str, body: dict, timeout: float = 30.0):
        super().__init__(daemon=True)
        self.url, self.body, self.timeout = url, body, timeout
        self.started = threading.Event()
        self.raw = b""

    def run(self) -> None:
        req = urllib.request.Request(self.url, data=json.dumps(self.body).encode(),
                                     headers={"content-type": "application/json"})
        chunks = []
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                for line in resp:
                    chunks.append(line)
                    self.started.set()
        finally:
            self.raw = b"".join(chunks)
            self.started.set()
