# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""StartWatch for a serving group's follower (node_rank >= 1): no API, so its readiness comes from its journal (the
dummy health server's start), never from HTTP; and every node's watch says whether it joined the rendezvous."""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.watch import StartWatch

OLD = "0a1d5e0c2b7f4c3e9d8a6b5c4d3e2f10"
NEW = "9f8e7d6c5b4a49388271605f4e3d2c1b"
T0 = 1764493315.0

# What the stand-in's follower (node_rank 1 of 2, TP 4) prints, in SGLang's formats.
FOLLOWER = [
    "[2026-12-01 15:29:27 TP2] Init parallel begin.",
    "[2026-12-01 15:29:27 TP3] Init parallel begin.",
    "[2026-12-01 15:29:28 TP2] Init parallel ends. elapsed=0.20 s",
    "[2026-12-01 15:29:28 TP2] Load weight begin. avail mem=21.43 GB",
    "[2026-12-01 15:29:29 TP2] Load weight end. elapsed=1.00 s, type=Qwen3ForCausalLM, avail mem=5.43 GB, mem usage=16.00 GB.",
    "[2026-12-01 15:29:30 TP2] max_total_num_tokens=100000, chunked_prefill_size=4096, max_prefill_tokens=16384, "
    "max_running_requests=2048, context_len=8192, available_gpu_mem=2.00 GB",
    "[2026-12-01 15:29:30] INFO:     Started server process [4300]",
    "[2026-12-01 15:29:30] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
]


def unit(invocation=NEW, active="active", sub="running", pid="4300", result="success", code="0", status="0"):
    return {"ActiveState": active, "SubState": sub, "MainPID": pid, "NRestarts": "0", "Result": result,
            "ExecMainCode": code, "ExecMainStatus": status, "InvocationID": invocation}


def follower_watch():
    watch = StartWatch(started_at=T0, timeout=60.0, stall_timeout=60.0, old_invocation=OLD, ready_from_journal=True)
    watch.on_unit(unit(active="activating", sub="start"), T0 + 0.2)
    return watch


def test_a_follower_is_ready_when_its_dummy_health_server_starts_and_http_never_decides():
    watch = follower_watch()
    for index, line in enumerate(FOLLOWER[:-1]):
        watch.on_line(line, T0 + 1 + index)
        assert watch.verdict(T0 + 1 + index) is None
    watch.on_line(FOLLOWER[-1], T0 + 10.0)
    verdict = watch.verdict(T0 + 10.05)
    assert verdict["outcome"] == "ready" and verdict["ready_noticed_at"] == T0 + 10.0
    assert verdict["joined"] is True and "journal says its schedulers are up" in verdict["reason"]


def test_a_follower_that_never_joins_fails_without_joined():
    watch = follower_watch()
    watch.on_line(FOLLOWER[0], T0 + 1)
    watch.on_line("[2026-12-01 15:29:57 TP2] Scheduler hit an exception: Traceback (most recent call last):\n"
                  "  File \"x.py\", line 1, in f\n    g()\n"
                  "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to "
                  "connect to (10.88.5.11, 20000).", T0 + 30)
    watch.on_line("[2026-12-01 15:29:57] Received sigquit from a child process. It usually means the child failed.", T0 + 30.01)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 30.1)
    verdict = None
    for step in range(1, 200):
        verdict = watch.verdict(T0 + 30.1 + step * 0.05)
        if verdict:
            break
    assert verdict["outcome"] == "failed" and verdict["cause"] == "distributed_init_failed"
    assert verdict["joined"] is False


def test_a_crash_before_the_ready_line_is_never_ready():
    watch = follower_watch()
    for index, line in enumerate(FOLLOWER[:4]):
        watch.on_line(line, T0 + 1 + index)
    watch.on_unit(unit(active="failed", sub="failed", pid="0", result="signal", code="2", status="9"), T0 + 6)
    watch.on_line(FOLLOWER[-1], T0 + 6.01)  # a line that comes late (the journal's order) never makes a dead node ready
    verdict = None
    for step in range(1, 200):
        verdict = watch.verdict(T0 + 6.1 + step * 0.05)
        if verdict:
            break
    assert verdict["outcome"] == "failed" and verdict["joined"] is True


def test_a_single_server_ignores_the_dummy_servers_line():
    watch = StartWatch(started_at=T0, timeout=60.0, stall_timeout=60.0, old_invocation=OLD)
    watch.on_unit(unit(active="activating", sub="start"), T0 + 0.2)
    for index, line in enumerate(FOLLOWER):
        watch.on_line(line, T0 + 1 + index)
        assert watch.verdict(T0 + 1 + index) is None  # only HTTP decides for a server that serves
