# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plan_launch, the launch's decision before anything is touched, as one table."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.plan import (
    ASK_READINESS, DRIFT, LEAVE, NOTHING, RESTART, ROLL_BACK, STOP, WOULD_RESTART, WOULD_WRITE, LaunchPlan, plan_launch)

YAML, ENV = "/etc/sglang/main.yaml", "/etc/sglang/main.env"
ALL = [ENV, YAML]

# last good, changed, files_changed, state, check mode, rollback, ready now -> action, changed_files, reason, on failure
TABLE = [
    # nothing differs: the unit's readiness decides, and is asked for only then
    (True, [], False, "started", False, True, None, ASK_READINESS, [], None, LEAVE),
    (True, [], False, "started", False, True, True, NOTHING, [], None, LEAVE),
    (True, [], False, "started", False, True, False, RESTART, [], "not active and ready", LEAVE),
    (True, [], True, "started", False, True, True, NOTHING, [], None, LEAVE),  # outside check mode the disk tells
    # a rolling restart: always, never asks, and a failure has nothing to roll back to (the files are the good ones)
    (True, [], False, "restarted", False, True, None, RESTART, [], "restart requested", LEAVE),
    (True, [], False, "restarted", False, True, True, RESTART, [], "restart requested", LEAVE),
    # changed files: restart, roll back on failure
    (True, [YAML], False, "started", False, True, None, RESTART, [YAML], YAML, ROLL_BACK),
    (True, ALL, False, "restarted", False, True, None, RESTART, ALL, ", ".join(ALL), ROLL_BACK),  # the files are the reason
    (True, [YAML], False, "started", False, False, None, RESTART, [YAML], YAML, LEAVE),  # rollback off
    # no launch ever reached ready: every file counts as changed; a failure stops the unit
    (False, ALL, False, "started", False, True, None, RESTART, ALL, ", ".join(ALL), STOP),
    (False, ALL, False, "started", False, False, None, RESTART, ALL, ", ".join(ALL), STOP),
    # check mode: the same decisions, said, not done
    (True, [YAML], False, "started", True, True, None, WOULD_RESTART, [YAML], YAML, ROLL_BACK),
    (True, [], True, "started", True, True, None, WOULD_RESTART, [WOULD_WRITE], WOULD_WRITE, LEAVE),  # would write, not written
    (True, [YAML], True, "started", True, True, None, WOULD_RESTART, [YAML], YAML, ROLL_BACK),  # the disk already tells
    (True, [], False, "restarted", True, True, None, WOULD_RESTART, [], "restart requested", LEAVE),
    (True, [], False, "started", True, True, None, ASK_READINESS, [], None, LEAVE),
    (True, [], False, "started", True, True, False, WOULD_RESTART, [], "not active and ready", LEAVE),
    (True, [], False, "started", True, True, True, NOTHING, [], None, LEAVE),
    (False, ALL, False, "started", True, True, None, WOULD_RESTART, ALL, ", ".join(ALL), STOP),
]


@pytest.mark.parametrize("has_last_good, changed, files_changed, state, check_mode, rollback, ready_now, action, reported, reason, on_failure",
                         TABLE)
def test_plan(has_last_good, changed, files_changed, state, check_mode, rollback, ready_now, action, reported, reason, on_failure):
    plan = plan_launch(has_last_good=has_last_good, changed=changed, files_changed=files_changed, state=state, check_mode=check_mode,
                       rollback=rollback, ready_now=ready_now)
    assert plan == LaunchPlan(action, reported, reason, on_failure)


def test_the_plan_does_not_keep_the_callers_list():
    changed = [YAML]
    plan = plan_launch(has_last_good=True, changed=changed, files_changed=False, state="started", check_mode=False, rollback=True)
    changed.append(ENV)
    assert plan.changed_files == [YAML]


@pytest.mark.parametrize("files_changed, drifted, check_mode, action, reason", [
    (True, True, False, RESTART, DRIFT),  # written back, and the process is not the one that reached ready: it ran the drift
    (True, False, False, ASK_READINESS, None),  # written back, the process is the good one: it never read the hand edit
    (False, True, False, ASK_READINESS, None),  # nothing written: the disk is what the role wants
    (True, True, True, WOULD_RESTART, WOULD_WRITE),  # check mode says it would write, and so would restart
])
def test_drift_written_back_restarts_the_process_that_runs_it(files_changed, drifted, check_mode, action, reason):
    plan = plan_launch(has_last_good=True, changed=[], files_changed=files_changed, state="started", check_mode=check_mode,
                       rollback=True, drifted=drifted)
    assert (plan.action, plan.reason) == (action, reason)
    assert plan.on_failure == LEAVE  # the files are the last good ones: a failure has nothing else to go back to
