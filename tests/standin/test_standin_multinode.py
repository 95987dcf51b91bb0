"""Several nodes, one instance: rank 0 waits at --dist-init-addr for every rank, a lost peer ends the other side,
only rank 0 serves the API, and rank 0's clean stop ends its followers (the stand-in's rendezvous.py)."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import json
import signal

from standin_helpers import free_port, http

SIGKILL = -signal.SIGKILL


def group_args(rendezvous_port, node_rank, *extra):
    return ("--tp-size", "4", "--nnodes", "2", "--node-rank", str(node_rank), "--host", "127.0.0.1",
            "--dist-init-addr", f"127.0.0.1:{rendezvous_port}", *extra)


def serving_group(launch):
    """A two-node group up: rank 0 ready, the follower past its rendezvous and serving its dummy health."""
    port = free_port()
    leader = launch(*group_args(port, 0))
    follower = launch(*group_args(port, 1))
    leader.wait_ready()
    follower.wait_for("Uvicorn running on")
    return leader, follower


def test_two_nodes_meet_and_only_rank_0_serves(launch):
    leader, follower = serving_group(launch)
    assert " TP0] Init " in leader.output and " TP1] Init " in leader.output and " TP2] Init " not in leader.output
    assert " TP2] Init " in follower.output and " TP0] Init " not in follower.output  # each node prints its own ranks
    status, body, _headers = http("POST", leader.url("/generate"), {"text": "hi", "sampling_params": {"max_new_tokens": 2}})
    assert status == 200 and json.loads(body)["text"]
    assert http("GET", follower.url("/health"))[0] == 200  # SGLang's dummy health server: always 200
    assert http("POST", follower.url("/generate"), {"text": "hi"})[0] == 404  # no API on a follower
    assert "The server is fired up and ready to roll!" not in follower.output


def test_rank_0_alone_times_out_with_torchs_message(launch):
    leader = launch(*group_args(free_port(), 0, "--dist-timeout", "30"))
    assert leader.wait_exit() == SIGKILL
    out = leader.output
    assert "torch.distributed.DistStoreError: Timed out after 31 seconds waiting for clients. 2/4 clients joined." in out
    assert "Scheduler hit an exception: Traceback (most recent call last):" in out
    assert "Load weight begin" not in out and "Uvicorn running" not in out
    assert out.rstrip().endswith("Received sigquit from a child process. It usually means the child failed.")


def test_a_follower_without_rank_0_times_out_connecting(launch):
    port = free_port()
    follower = launch(*group_args(port, 1, "--dist-timeout", "20"))
    assert follower.wait_exit() == SIGKILL
    assert ("torch.distributed.DistNetworkError: The client socket has timed out after 20000ms while trying to connect "
            f"to (127.0.0.1, {port}).") in follower.output


def test_a_follower_crashing_during_loading_takes_rank_0_down(launch):
    port = free_port()
    leader = launch(*group_args(port, 0))
    follower = launch(*group_args(port, 1), settings={"fault": "crash", "fault_phase": "load", "fault_cause": "oom_weights"})
    assert follower.wait_exit() == SIGKILL
    assert "torch.OutOfMemoryError: CUDA out of memory." in follower.output
    assert leader.wait_exit() == SIGKILL  # the leader loses its peer and exits
    out = leader.output
    assert "[c10d] recvValue failed on SocketImpl(" in out and "Connection reset by peer" in out
    assert "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:538] Connection closed by peer [127.0.0.1]:" in out
    assert "The server is fired up and ready to roll!" not in out


def test_rank_0_dying_takes_the_follower_down(launch):
    leader, follower = serving_group(launch)
    leader.proc.send_signal(signal.SIGKILL)
    assert follower.wait_exit() == SIGKILL
    assert "Connection closed by peer" in follower.output


def test_rank_0_stopping_cleanly_stops_its_followers(launch):
    leader, follower = serving_group(launch)
    leader.proc.send_signal(signal.SIGTERM)
    assert leader.wait_exit() == 0
    assert follower.wait_exit() == 0
    assert "Received ShutdownReq from node_rank 0; node_rank 1 exits." in follower.output
    assert "Connection closed by peer" not in follower.output


def test_a_restarted_follower_meets_the_next_rank_0_not_the_old_one(launch):
    port = free_port()
    first = launch(*group_args(port, 0))
    follower = launch(*group_args(port, 1))
    first.wait_ready()
    first.proc.send_signal(signal.SIGTERM)
    assert first.wait_exit() == 0 and follower.wait_exit() == 0
    second = launch(*group_args(port, 0))
    again = launch(*group_args(port, 1))
    second.wait_ready()
    again.wait_for("Uvicorn running on")
