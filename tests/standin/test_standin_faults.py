"""Injected faults: each gives SGLang's output and the exit a supervisor would see."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import json
import signal
import socket
import subprocess
import sys
import time

import pytest

from standin_helpers import ENTRY, http, standin_env
from sglang._standin import faults

SIGKILL = -signal.SIGKILL

CRASHES = [
    # cause, phase, last phase line printed, first line that must not appear, final exception line
    ("oom_weights", "load", "Load weight begin", "Load weight end", "torch.OutOfMemoryError: CUDA out of memory."),
    ("oom_kv", "kv", "Load weight end", "KV Cache is allocated", "torch.OutOfMemoryError: CUDA out of memory."),
    ("oom_graph", "graph", "KV Cache is allocated", "CUDA graph end",
     "Exception: Capture cuda graph failed: CUDA out of memory."),
    ("not_enough_memory", "kv", "Load weight end", "KV Cache is allocated",
     "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."),
    ("nccl", "init", "Init parallel begin", "Load weight begin", "torch.distributed.DistBackendError: NCCL error in:"),
    ("p2p", "init", "Init parallel begin", "Load weight begin",
     "RuntimeError: CUDART error: peer access is not supported between these two devices"),
    ("unsupported_arch", "load", "Load weight begin", "Load weight end",
     "ValueError: Model architectures ['Qwen2ForCausalLM'] are not supported for now."),
    ("kernel_compile", "graph", "KV Cache is allocated", "CUDA graph end", "RuntimeError: Ninja build failed."),
]


@pytest.mark.parametrize("cause,phase,seen,unseen,last", CRASHES)
def test_crash_in_phase(launch, cause, phase, seen, unseen, last):  # pylint: disable=too-many-arguments,too-many-positional-arguments
    server = launch(settings={"fault": "crash", "fault_cause": cause, "fault_phase": phase})
    assert server.wait_exit() == SIGKILL  # SGLang kills its own process tree: status=9/KILL
    out = server.output
    assert "Scheduler hit an exception: Traceback (most recent call last):" in out
    assert last in out
    assert out.index(seen) < out.index("Scheduler hit an exception")
    assert unseen not in out and "Uvicorn running" not in out
    assert out.rstrip().endswith("Received sigquit from a child process. It usually means the child failed.")


def test_cuda_oom_cause_follows_the_phase():
    assert faults._cause_for("cuda_oom", "graph") == "oom_graph"  # pylint: disable=protected-access
    assert faults._cause_for("cuda_oom", "kv") == "oom_kv"  # pylint: disable=protected-access
    assert faults._cause_for(None, None) == "generic"  # pylint: disable=protected-access


def test_exit_code_override(launch):
    server = launch(settings={"fault": "crash", "fault_phase": "load", "fault_exit_code": "3"})
    assert server.wait_exit() == 3
    assert "RuntimeError: stand-in injected failure in phase load" in server.output


def test_model_not_found_fails_in_the_main_process(launch):
    server = launch(settings={"fault": "crash", "fault_cause": "model_not_found"}, model="/models/missing")
    assert server.wait_exit() == 1
    out = server.output
    assert "Traceback (most recent call last):" in out and "server_args=" not in out
    assert out.rstrip().endswith("OSError: Can't load the configuration of '/models/missing'. If you were trying to load "
                                 "it from 'https://huggingface.co/models', make sure you don't have a local directory "
                                 "with the same name. Otherwise, make sure '/models/missing' is the correct path to a "
                                 "directory containing a config.json file")


def test_model_path_check_uses_a_real_config(launch, tmp_path):
    missing = launch(settings={"check_model_path": "1"}, model=str(tmp_path / "nope"))
    assert missing.wait_exit() == 1
    assert "OSError: Can't load the configuration of" in missing.output
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["MistralForCausalLM"], "max_position_embeddings": 4096}))
    server = launch(settings={"check_model_path": "1"}, model=str(model)).wait_ready()
    info = json.loads(http("GET", server.url("/model_info"))[1])
    assert info["architectures"] == ["MistralForCausalLM"]
    assert json.loads(http("GET", server.url("/v1/models"))[1])["data"][0]["max_model_len"] == 4096


def refused(port):
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_hang_in_load_keeps_the_port_closed(launch):
    server = launch(settings={"fault": "hang", "fault_phase": "load"})
    server.wait_for("Load weight begin")
    time.sleep(0.5)
    assert server.proc.poll() is None and "Load weight end" not in server.output
    assert refused(server.port)
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait_exit() == -signal.SIGTERM


def test_hang_in_warmup_answers_503(launch):
    server = launch(settings={"fault": "hang", "fault_phase": "warmup"})
    server.wait_for("Uvicorn running on")
    time.sleep(0.3)
    assert http("GET", server.url("/health"))[0] == 503
    assert http("GET", server.url("/ready"))[0] == 503
    assert "ready to roll" not in server.output


def test_port_in_use_fault(launch):
    server = launch(settings={"fault": "port_in_use"})
    assert server.wait_exit() == 1
    assert "INFO:     Application startup complete." in server.output
    assert (f"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', {server.port}): "
            "address already in use") in server.output


def test_real_busy_port_fails_the_same_way(launch):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        server = launch(port=busy.getsockname()[1])
        assert server.wait_exit() == 1
    assert "address already in use" in server.output
    assert server.output.index("Capture target decode CUDA graph end") < server.output.index("Errno 98")


def test_exit_after_ready(launch):
    server = launch(settings={"fault": "exit_after_ready", "fault_after": "20"})  # 20 s x 0.01
    server.wait_ready()
    assert server.wait_exit() == SIGKILL
    assert "SIGQUIT received. signum=None, frame=None. It usually means one child failed." in server.output


def test_health_turns_503(launch):
    server = launch(settings={"fault": "unhealthy", "fault_after": "0", "SGLANG_HEALTH_CHECK_TIMEOUT": "5"})
    server.wait_ready()
    time.sleep(0.1)
    assert http("GET", server.url("/health"))[0] == 503
    assert http("GET", server.url("/ready"))[0] == 503
    assert "Health check failed. Server couldn't get a response from detokenizer for last 5 seconds." in server.output


def time_to_ready(launch, **settings):
    start = time.monotonic()
    launch(settings=settings).wait_ready()
    return time.monotonic() - start


def test_slow_start(launch):
    # The startup phases (~1.45 s of the test profile) at time scale 0.01, 200 times slower: ~2.9 s. A loaded
    # machine can only add to that, so the check is a lower bound (a start without the fault takes ~0.015 s of phases).
    slow = time_to_ready(launch, fault="slow_start", slow_factor="200")
    assert slow >= 0.9 * 1.45 * 0.01 * 200


def test_p2p_crash_arises_from_the_profile(launch, tmp_path):
    profile = json.loads((faults.settings.PROFILE_DIR / "test-fast.json").read_text())
    profile["gpu"].update(count=2, p2p=False, name="NVIDIA GeForce RTX 4090")
    path = tmp_path / "rtx4090x2.json"
    path.write_text(json.dumps(profile))
    server = launch("--tp", "2", settings={"profile": str(path)})
    assert server.wait_exit() == SIGKILL
    assert "[2" in server.output and " TP0] Scheduler hit an exception" in server.output
    assert "peer access is not supported between these two devices" in server.output
    launch("--tp", "2", "--disable-custom-all-reduce", settings={"profile": str(path)}).wait_ready()


@pytest.mark.parametrize("fraction,last", [("0.01", "RuntimeError: Not enough memory."),
                                           ("1.5", "torch.OutOfMemoryError: CUDA out of memory.")])
def test_memory_failures_arise_from_flags(launch, fraction, last):
    server = launch("--mem-fraction-static", fraction)
    assert server.wait_exit() == SIGKILL
    assert last in server.output


def test_unknown_fault_is_refused():
    result = subprocess.run([sys.executable, "-c", ENTRY, "serve", "--model-path", "/m"],
                            env=standin_env(fault="explode"), capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 1 and "unknown fault explode" in result.stderr


def test_crash_in_warmup(launch):
    server = launch(settings={"fault": "crash", "fault_phase": "warmup"})
    assert server.wait_exit() == SIGKILL
    out = server.output
    assert out.index("Uvicorn running on") < out.index("Initialization failed. warmup error: Traceback (most recent call last):")
    assert "RuntimeError: stand-in injected failure in phase warmup" in out and "ready to roll" not in out
