# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""startup/plan as the launch result shows it: the texts and the group actions are written out, not imported.

The group's action is sglang_launch's return value ``group_action`` (nothing, promote, discard, restore, restart,
stop, leave, as its RETURN documents them); the check-mode stand-in for files not yet written is what
``changed_files`` reports, and the drift reason is what the verdict record and the check-mode message say.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.plan import plan_group_verdict, plan_launch


def group(**facts):
    base = {"passed": True, "has_pending": True, "pending_matches_disk": True, "has_last_good": True, "group_restart": False,
            "rollback": True}
    base.update(facts)
    verdict = plan_group_verdict(**base)
    return verdict.action, verdict.drop_pending


@pytest.mark.parametrize("facts, expected", [
    ({}, ("promote", True)),
    ({"pending_matches_disk": False}, ("discard", True)),
    ({"has_pending": False}, ("nothing", False)),
    ({"passed": False}, ("restore", True)),
    ({"passed": False, "has_last_good": False}, ("stop", True)),
    ({"passed": False, "has_pending": False, "group_restart": True}, ("restart", False)),
    ({"passed": False, "has_pending": False}, ("nothing", False)),
    ({"passed": False, "rollback": False}, ("leave", True)),
    ({"passed": False, "rollback": False, "has_pending": False}, ("nothing", False)),
])
def test_the_group_action_is_the_documented_word(facts, expected):
    assert group(**facts) == expected


def launch(**facts):
    base = {"has_last_good": True, "changed": [], "files_changed": False, "state": "started", "check_mode": False,
            "rollback": True}
    base.update(facts)
    return plan_launch(**base)


def test_check_mode_reports_the_files_it_would_write_in_these_words():
    plan = launch(files_changed=True, check_mode=True)
    assert plan.changed_files == ["(files that this run would write)"]
    assert plan.reason == "(files that this run would write)"


def test_the_drift_reason_in_these_words():
    plan = launch(files_changed=True, drifted=True)
    assert plan.reason == "files changed by hand were written back, and the server was started with them"
    assert plan.changed_files == []


@pytest.mark.parametrize("facts, on_failure", [
    ({"has_last_good": False, "changed": ["/etc/sglang/main.yaml"]}, "stop"),
    ({"changed": ["/etc/sglang/main.yaml"], "rollback": False}, "leave"),
    ({"state": "restarted"}, "leave"),
])
def test_a_failure_that_stops_or_leaves_uses_the_group_words(facts, on_failure):
    # STOP and LEAVE are shared with the group's verdict, whose words the result reports
    assert launch(**facts).on_failure == on_failure


def test_a_restart_is_the_group_word_restart_and_a_ready_unit_is_nothing():
    assert launch(ready_now=False).action == "restart"
    assert launch(ready_now=True).action == "nothing"
