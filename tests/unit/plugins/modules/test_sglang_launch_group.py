# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_launch with group_role follower: the fake host of test_sglang_launch.py, a follower's journal, and a dummy
health server that answers 200 from the start - which never makes a follower ready by itself."""

from __future__ import annotations

import os

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import file_digest, load_manifest
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import JournalLine

from test_sglang_launch import (  # noqa: F401  pylint: disable=unused-import
    BAD, GOOD, NEVER_STARTED, STOPPING, UNIT, Host, _unit, break_config, files, no_probe, params_for, ready_launch, run, snapshot)

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


# ------------------------------------------------------------------------------------------------ the group's verdict
def _pending(files):
    return os.path.join(files[1], "pending")


def test_a_group_nodes_launch_that_passed_is_pending_and_the_previous_last_good_stays(files):  # pylint: disable=redefined-outer-name
    good = snapshot(files)
    break_config(files)
    host = Host([follower_launch([JOINED, LOADED, DUMMY_UP])])
    result = run(host, params_for(files, group_role="follower", soak_time=0.0))
    assert result["ready"] is True and result["pending"] is True
    assert load_manifest(os.path.join(files[1], "last-good"))["files"] == good["files"]  # the way back is untouched
    assert load_manifest(_pending(files))["files"][files[0][0]]["sha256"] == file_digest(files[0][0])

    passed = run(Host(), params_for(files, group_role="follower", state="group_passed"))
    assert passed["group_action"] == "promote" and passed["changed"] is True and passed["restarted"] is False
    assert load_manifest(os.path.join(files[1], "last-good"))["files"][files[0][0]]["sha256"] == file_digest(files[0][0])
    assert not os.path.exists(_pending(files))
    again = run(Host(), params_for(files, group_role="follower", state="group_passed"))  # a second verdict changes nothing
    assert again["group_action"] == "nothing" and again["changed"] is False


def test_a_failed_group_restores_a_node_that_passed_and_restarts_it(files):  # pylint: disable=redefined-outer-name
    good = snapshot(files)
    break_config(files)
    run(Host([follower_launch([JOINED, LOADED, DUMMY_UP])]), params_for(files, group_role="follower", soak_time=0.0))
    host = Host([follower_launch([JOINED, LOADED, DUMMY_UP], invocation="inv-back", pid="4400")])
    result = run(host, params_for(files, group_role="follower", state="group_failed", group_restart=True, soak_time=0.0))
    assert result["group_action"] == "restore" and result["rolled_back"] is True and result["rollback_ready"] is True
    assert result["restored_files"] == [files[0][0]] and len(host.commands("restart")) == 1
    assert result["after_group"]["rolled_back"] is True and result["after_group"]["pending"] is False
    with open(files[0][0], "rb") as handle:
        assert handle.read() == GOOD
    assert not os.path.exists(_pending(files))
    assert load_manifest(os.path.join(files[1], "last-good"))["files"] == good["files"]


def test_a_failed_group_restarts_a_node_already_on_its_last_good_files_only_with_group_restart(files):  # pylint: disable=redefined-outer-name
    snapshot(files)
    quiet = Host()
    assert run(quiet, params_for(files, group_role="leader", state="group_failed"))["group_action"] == "nothing"
    assert not quiet.commands("restart")
    host = Host([ready_launch(invocation="inv-again")])
    result = run(host, params_for(files, group_role="leader", state="group_failed", group_restart=True))
    assert result["group_action"] == "restart" and result["restored_files"] == [] and result["ready"] is True
    assert len(host.commands("restart")) == 1


def test_check_mode_says_what_the_verdict_would_do_and_touches_nothing(files):  # pylint: disable=redefined-outer-name
    snapshot(files)
    break_config(files)
    run(Host([follower_launch([JOINED, LOADED, DUMMY_UP])]), params_for(files, group_role="follower", soak_time=0.0))
    host = Host()
    result = run(host, params_for(files, group_role="follower", state="group_failed"), check_mode=True)
    assert result["group_action"] == "restore" and result["changed"] is True and result["restarted"] is True
    assert not host.commands("restart") and os.path.exists(_pending(files))
    with open(files[0][0], "rb") as handle:
        assert handle.read() == BAD


def test_a_first_launch_that_passed_stops_when_the_group_fails(files):  # pylint: disable=redefined-outer-name
    run(Host([follower_launch([JOINED, LOADED, DUMMY_UP])], before=NEVER_STARTED), params_for(files, group_role="follower", soak_time=0.0))
    host = Host()
    result = run(host, params_for(files, group_role="follower", state="group_failed", group_restart=True))
    assert result["group_action"] == "stop" and result["stopped"] is True and host.commands("stop")
    assert not os.path.exists(_pending(files))


def test_a_single_server_keeps_its_launch_as_last_good_at_once(files):  # pylint: disable=redefined-outer-name
    snapshot(files)
    break_config(files)
    result = run(Host([ready_launch()]), params_for(files))
    assert "pending" not in result and not os.path.exists(_pending(files))
