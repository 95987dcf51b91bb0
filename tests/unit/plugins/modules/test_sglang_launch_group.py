# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_launch with group_role follower: the fake host of test_sglang_launch.py, a follower's journal, and a dummy
health server that answers 200 from the start - which never makes a follower ready by itself."""

from __future__ import annotations

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import JournalLine

from test_sglang_launch import STOPPING, UNIT, Host, _unit, no_probe, params_for, run, snapshot, files  # noqa: F401  pylint: disable=unused-import

JOINED = "[2026-12-01 15:29:28 TP2] Init parallel ends. elapsed=0.20 s"
LOADED = "[2026-12-01 15:29:30 TP2] Load weight end. elapsed=1.00 s, type=Qwen3ForCausalLM, avail mem=5.43 GB, mem usage=16.00 GB."
DUMMY_UP = "[2026-12-01 15:29:30] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"


def follower_launch(lines, invocation="inv-follower", pid="4300"):
    entries = [JournalLine(0.0, int(pid), "sglang", text) for text in lines]
    return {"invocation": invocation, "lines": entries, "http": 200, "old": len(STOPPING),
            "states": STOPPING + [_unit(invocation, "activating", "start", pid), _unit(invocation, pid=pid)]}


def test_a_follower_is_ready_from_its_journal_and_never_probed(files):  # pylint: disable=redefined-outer-name
    snapshot(files)
    host = Host([follower_launch([JOINED, LOADED, DUMMY_UP])])
    result = run(host, params_for(files, state="restarted", group_role="follower", soak_time=0.0), probe=no_probe)
    assert result["ready"] is True and result["restarted"] is True and result["joined"] is True
    assert result["readiness_url"] == "http://127.0.0.1:30000/health"
    assert "failure" not in result


def test_the_dummy_200_alone_never_makes_a_follower_ready(files):  # pylint: disable=redefined-outer-name
    snapshot(files)
    host = Host([follower_launch([JOINED, LOADED])])  # loading never ends: no dummy server line
    result = run(host, params_for(files, state="restarted", group_role="follower", timeout=1.0, stall_timeout=60.0))
    assert result["failure"]["cause"] == "timeout" and result["failure"]["joined"] is True
    assert result["ready"] is False and result["rolled_back"] is False  # its files were already the last good ones


def test_a_follower_with_nothing_to_do_is_asked_on_its_dummy_health(files):  # pylint: disable=redefined-outer-name
    snapshot(files)
    host = Host()
    result = run(host, params_for(files, group_role="follower"))
    assert result["restarted"] is False and result["ready"] is True
    assert result["readiness_url"] == "http://127.0.0.1:30000/health"
