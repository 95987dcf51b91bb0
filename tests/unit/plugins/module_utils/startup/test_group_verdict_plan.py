# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plan_group_verdict: what a serving group's verdict does on one node, as one table."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.plan import (
    DISCARD, LEAVE, NOTHING, PROMOTE, RESTART, RESTORE, STOP, GroupVerdictPlan, plan_group_verdict)


def plan(**facts):
    base = {"passed": True, "has_pending": True, "pending_matches_disk": True, "has_last_good": True, "group_restart": False,
            "rollback": True}
    base.update(facts)
    return plan_group_verdict(**base)


@pytest.mark.parametrize("facts, expected", [
    ({}, GroupVerdictPlan(PROMOTE, True)),
    ({"pending_matches_disk": False}, GroupVerdictPlan(DISCARD, True)),
    ({"has_pending": False}, GroupVerdictPlan(NOTHING, False)),
    ({"has_pending": False, "group_restart": True}, GroupVerdictPlan(NOTHING, False)),  # a passed group restarts nothing
    ({"passed": False}, GroupVerdictPlan(RESTORE, True)),
    ({"passed": False, "group_restart": True}, GroupVerdictPlan(RESTORE, True)),
    ({"passed": False, "has_last_good": False}, GroupVerdictPlan(STOP, True)),
    ({"passed": False, "has_pending": False, "group_restart": True}, GroupVerdictPlan(RESTART, False)),
    ({"passed": False, "has_pending": False}, GroupVerdictPlan(NOTHING, False)),
    ({"passed": False, "has_pending": False, "group_restart": True, "has_last_good": False}, GroupVerdictPlan(NOTHING, False)),
    ({"passed": False, "rollback": False}, GroupVerdictPlan(LEAVE, True)),
    ({"passed": False, "rollback": False, "has_pending": False, "group_restart": True}, GroupVerdictPlan(NOTHING, False)),
])
def test_the_group_verdict_on_one_node(facts, expected):
    assert plan(**facts) == expected


def test_a_failed_group_never_promotes_and_a_passed_one_never_restarts():
    for pending in (True, False):
        for last_good in (True, False):
            for restart in (True, False):
                failed = plan(passed=False, has_pending=pending, has_last_good=last_good, group_restart=restart)
                passed = plan(passed=True, has_pending=pending, has_last_good=last_good, group_restart=restart)
                assert failed.action != PROMOTE
                assert passed.action not in (RESTORE, RESTART, STOP)
