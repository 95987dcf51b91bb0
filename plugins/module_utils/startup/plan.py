# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a launch will do, decided before anything is touched: restart or not, and what a failure leads to.

Why a pure function: the decision reads a handful of facts (is there a last good launch, which files differ
from it, did this run's tasks write files, ``state``, check mode, ``rollback``) and is easy to get subtly
wrong in the middle of side effects. Here it is one table, tested as one. The only fact that costs I/O,
whether the unit is active and ready now, is asked for only when nothing else decides (:data:`ASK_READINESS`).

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence

# Actions.
NOTHING = "nothing"  # the server runs the files that last reached ready, and is ready: touch nothing
RESTART = "restart"  # restart and follow the start
WOULD_RESTART = "would_restart"  # check mode: say so, touch nothing
ASK_READINESS = "ask_readiness"  # nothing asks for a restart: decide by whether the unit is active and ready now

# What a failed start leads to.
ROLL_BACK = "roll_back"  # put the last good files back and restart with them
STOP = "stop"  # nothing ever reached ready here: stop, so a crash loop or a hung start does not hold the GPUs
LEAVE = "leave"  # the files are those of the last good launch (or rollback is off): leave them

# In check mode the tasks that write the files did not write them: this stands for what they would write.
WOULD_WRITE = "(files that this run would write)"
# The files were changed by hand and this run wrote them back, while the process was started outside a launch.
DRIFT = "files changed by hand were written back, and the server was started with them"


class LaunchPlan(NamedTuple):
    """The decision, with what the result reports about it."""

    action: str  # NOTHING, RESTART, WOULD_RESTART or ASK_READINESS
    changed_files: List[str]  # as reported (check mode: WOULD_WRITE when the writing tasks would change files)
    reason: Optional[str]  # why it restarts, as the check-mode message says it; None when it does not
    on_failure: str  # ROLL_BACK, STOP or LEAVE


def plan_launch(*, has_last_good: bool, changed: Sequence[str], files_changed: bool, state: str, check_mode: bool,
                rollback: bool, ready_now: Optional[bool] = None, drifted: bool = False) -> LaunchPlan:
    """Decide the launch.

    ``changed`` are the files that differ from the last launch that reached ready (every file when there is
    none); ``files_changed`` says this run's tasks wrote files, which only check mode cannot see on disk;
    ``ready_now`` is whether the unit is active and ready, None while not asked (the plan then says
    :data:`ASK_READINESS`, and is asked again with it).

    A failed start rolls back only to files that differ: after ``state: restarted`` without a change the
    files are already the last good ones, and rolling back would restart the same failure.

    ``drifted``: this run wrote files back to the last good content, and the running process is not the one that
    last reached ready (someone changed a file by hand and restarted the unit). That process runs with the
    hand-made settings, so writing the file back is not enough: it restarts.
    """
    reported = list(changed)
    if check_mode and files_changed and not reported:
        reported = [WOULD_WRITE]
    on_failure = STOP if not has_last_good else (ROLL_BACK if rollback and changed else LEAVE)
    if reported:
        reason: Optional[str] = ", ".join(reported)
    elif state == "restarted":
        reason = "restart requested"
    elif drifted and files_changed:
        reason = DRIFT
    elif ready_now is None:
        return LaunchPlan(ASK_READINESS, reported, None, on_failure)
    elif not ready_now:
        reason = "not active and ready"
    else:
        return LaunchPlan(NOTHING, reported, None, on_failure)
    return LaunchPlan(WOULD_RESTART if check_mode else RESTART, reported, reason, on_failure)


# ------------------------------------------------------------------------------------------------ a serving group
# A node of a serving group (docs/serving-groups.md) whose own launch passed keeps the new files as PENDING: its
# previous last good snapshot stays until the group's verdict, since rank 0 can still fail after a follower's soak
# ended (its warmup, its probe gate). What the verdict leads to on one node:
PROMOTE = "promote"  # the group passed: the pending snapshot becomes the last good one
DISCARD = "discard"  # a pending snapshot that no longer matches the files on disk (a run that never got its verdict)
RESTORE = "restore"  # the group failed after this node passed: put its last good files back, restart with the group
# RESTART: the group failed and other nodes restore: restart with its (last good) files, as one group
# STOP: the group failed, this node passed on its first launch and has nothing good to go back to
# LEAVE: the group failed and rollback is off: its pending snapshot is dropped, the files left as they are


class GroupVerdictPlan(NamedTuple):
    """What the group's verdict does on one node."""

    action: str  # NOTHING, PROMOTE, DISCARD, RESTORE, RESTART, STOP or LEAVE
    drop_pending: bool  # whether the pending snapshot goes (promoted, stale, or not approved by the group)


def plan_group_verdict(*, passed: bool, has_pending: bool, pending_matches_disk: bool, has_last_good: bool,
                       group_restart: bool, rollback: bool) -> GroupVerdictPlan:
    """Decide what the group's verdict does on one node.

    ``passed``: every node of the group reached ready (the controller's ``serving_group_verdict``); ``has_pending``:
    this node's launch passed and kept its files as pending; ``pending_matches_disk``: the files on disk are those
    of the pending snapshot; ``has_last_good``: a verified last good snapshot exists (from before this launch);
    ``group_restart``: some node of the failed group restores its last good files, so every node restarts (a node
    restarted alone takes its peers down); ``rollback``: the role's rollback setting.

    The previous last good snapshot is never touched before the group passed: a failed group restores from it.
    """
    if passed:
        if not has_pending:
            return GroupVerdictPlan(NOTHING, False)
        return GroupVerdictPlan(PROMOTE if pending_matches_disk else DISCARD, True)
    if not rollback:
        return GroupVerdictPlan(LEAVE if has_pending else NOTHING, has_pending)
    if has_pending and not has_last_good:
        return GroupVerdictPlan(STOP, True)
    if has_pending:
        return GroupVerdictPlan(RESTORE, True)
    if group_restart and has_last_good:
        return GroupVerdictPlan(RESTART, False)
    return GroupVerdictPlan(NOTHING, False)
