"""Fixtures for the stand-in tests; the helpers live in ``standin_helpers``."""

from typing import Dict, List, Optional

import pytest

from standin_helpers import Server, free_port, standin_env


@pytest.fixture
def launch():
    """Start stand-in servers; all are stopped at the end of the test."""
    started: List[Server] = []

    def _launch(*args: str, settings: Optional[Dict[str, str]] = None, module: bool = False,
                port: Optional[int] = None, model: str = "/models/test") -> Server:
        port = port or free_port()
        argv = (["--model-type", "llm"] if not module else []) + ["--model-path", model, "--port", str(port), *args]
        server = Server(argv, standin_env(**(settings or {})), port, module=module)
        started.append(server)
        return server

    yield _launch
    for server in started:
        server.stop()
