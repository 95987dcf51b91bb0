#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start or restart an SGLang unit, follow it to ready or to a diagnosed failure, and roll back."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: sglang_launch
short_description: Launch an SGLang systemd unit, follow it to ready, diagnose a failure and roll back
version_added: "0.1.0"
description:
  - Restarts the unit only when one of the O(files) that define the launch differs from the set that last reached
    ready (or O(state=restarted)), so a second run restarts nothing.
  - Follows the start as it happens, not by sleeping and re-reading a log - the unit's journal from the restart's
    cursor as one stream, the unit's state, main PID and restart counter, and the readiness endpoint
    (C(/ready) from SGLang 0.5.20, else C(/health); connection refused while the model loads is normal).
  - Ends the wait at once when the unit leaves C(active), the main PID exits, systemd restarts it, or SGLang logs
    a fatal line, and reports a cause label, a hint, the phase reached, the whole traceback and the last log lines.
    A phase without a new line of the server's own for its stall timeout fails as C(stalled); HTTP access-log lines
    (the module's own readiness polling among them) are no progress. A stall of a stopped process (SIGSTOP, state
    C(T)) says so.
  - On failure the last set of files that reached ready is put back, the unit restarted and followed; the task
    still fails and reports both the failure and the rollback. Secrets are redacted from everything returned.
  - Never starts without a verified way back - the last good snapshot's manifest holds checksums of its file list
    and of every stored copy, checked before the launch and again before a restore. A snapshot that is missing while
    the server runs, or damaged, is rebuilt from the running config when that server is healthy and its files on
    disk are those it started with; otherwise the task fails before anything restarts.
  - One launch of an instance at a time - a lock file in O(state_dir); a second deploy waits for it (O(lock_timeout)).
  - The verdict (with the diagnosis and the rollback) is written on the host, C(last-launch.json) in O(state_dir),
    and reported by the next run (RV(previous_launch)) or a O(state=status) call.
  - Files written back after a hand edit (O(files_changed) while their content is the last good one) restart the
    unit when the running process is not the one that reached ready - it may run with the hand-made settings.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
options:
  unit:
    description: The systemd unit, for example C(sglang-main.service).
    type: str
    required: true
  files:
    description:
      - The files that define the launch - the C(--config) YAML, the environment files, the unit file.
      - Their content decides whether a restart is needed; the same set is snapshotted when ready and restored on rollback.
    type: list
    elements: path
    required: true
  files_changed:
    description:
      - Set it from the tasks that wrote O(files) (or their O(staged) copies) in this run. In check mode nothing was
        written, so this is how the module can tell that a restart would follow.
    type: bool
    default: false
  staged:
    description:
      - Staged copies of some of O(files), rendered by the tasks before (same content, owner and mode the live file
        shall have). Every live file that differs from its staged copy is replaced, all together, before the launch - first
        each copy is staged beside its live file and synced, then they are renamed in; a failure at any point (a
        read-only or immutable file, a full disk) puts back what was done and fails the task before anything restarts,
        so the live set stays the old one, whole, matching what runs.
      - The staged copies are kept, so a second run finds nothing to write. A live file changed by hand is written back
        from its copy (and, when the process was started with it, restarted).
    type: list
    elements: dict
    default: []
    suboptions:
      src:
        description: The staged copy.
        type: path
        required: true
      dest:
        description: The live file (one of O(files)).
        type: path
        required: true
  state_dir:
    description: Folder for the last-good snapshot (created with mode 0700, it holds the config with its secrets).
    type: path
    required: true
  state:
    description:
      - C(started) restarts only when needed; C(restarted) always restarts (a rolling restart).
      - C(status) touches nothing and reports what the host knows - the last launch's verdict as written on the host
        (RV(last_launch)), who holds the launch lock, whether the last good snapshot verifies. A controller that lost
        the connection mid-launch reads the verdict this way.
      - C(group_passed) and C(group_failed) give a serving group's verdict to one node, after every node's launch
        (O(group_role) C(leader) or C(follower)). A node of a group keeps a launch that passed as pending, its previous
        last good snapshot untouched. Passed - the pending snapshot becomes the last good one. Failed - a node whose
        launch passed restores its last good files and restarts (stops, when it never had any), and with
        O(group_restart) every node restarts with its last good files, together (RV(group_action), RV(after_group)).
    type: str
    choices: [started, restarted, status, group_passed, group_failed]
    default: started
  host:
    description: Address the server listens on, as seen from the target (C(0.0.0.0) is probed on C(127.0.0.1)).
    type: str
    default: 127.0.0.1
  port:
    description: The server's HTTP port.
    type: int
    default: 30000
  sglang_version:
    description: The installed SGLang release; chooses the readiness endpoint.
    type: str
    required: true
  readiness_path:
    description: Override the readiness endpoint.
    type: str
  group_role:
    description:
      - The node's part in a serving group (one SGLang instance over several hosts, docs/serving-groups.md).
      - C(single) and C(leader) (node_rank 0) follow C(/ready) and C(/health) as usual.
      - C(follower) (node_rank 1 and up) serves no API, only SGLang's dummy health server that always answers 200,
        so its readiness comes from its journal (the dummy server's start says its schedulers are up), its soak
        counts that server's answers and its unit staying alive, and it runs no probe. The result says whether the
        node C(joined) the rendezvous.
      - C(leader) and C(follower) keep a launch that passed as pending (RV(pending)) until the group's verdict is given
        with O(state=group_passed) or O(state=group_failed).
    type: str
    choices: [single, leader, follower]
    default: single
  group_restart:
    description:
      - With O(state=group_failed) - some node of the group restores its last good files, so this node restarts with
        its own last good files at the same time (a node restarted alone takes its peers down).
    type: bool
    default: false
  timeout:
    description: Seconds from the restart to ready before the start fails as C(timeout).
    type: float
    default: 1800
  stall_timeout:
    description: Seconds without a new log line or phase change before the start fails as C(stalled).
    type: float
    default: 600
  stall_timeouts:
    description: Per-phase stall timeouts in seconds, keyed by phase name, for example C(weights_loading) or C(cuda_graph_capture).
    type: dict
    default: {}
  soak_time:
    description:
      - The soak window - seconds to keep watching after the first ready answer, asking C(/health) (one real
        generation) again and again. A server that exits or stops answering 200 in that time has not launched (causes
        C(crashed_after_ready), C(unhealthy_after_ready)) and is rolled back; its files become the last good ones only
        after the window passed with at least O(soak_checks) healthy answers.
      - C(0) declares the launch good at the first ready answer.
    type: float
    default: 30
    aliases: [settle_time]
  soak_checks:
    description: Healthy C(/health) answers the soak window needs at least (it waits longer for them when C(/health) is slow).
    type: int
    default: 3
  lock_timeout:
    description:
      - Seconds to wait for the instance's launch lock on the host (a file in O(state_dir)) while another deploy of the
        same instance holds it; then the task fails, saying who holds it since when. Nothing is restarted meanwhile.
    type: float
    default: 300
  holder:
    description: Who this deploy is, in words (the role passes the play and the controller user); shown to a second deploy that waits.
    type: str
    default: ""
  rollback:
    description: Put the last files that reached ready back after a failed start, and restart with them.
    type: bool
    default: true
  probe:
    description:
      - The last gate of a launch - after ready (and the soak window), run M(gpufleet.sglang.sglang_probe) with these
        options (the same names, for example C(concurrency), C(output_tokens), C(min_decode_tps), C(max_ttft_ms),
        C(baseline)). A gate that misses fails the launch (cause C(probe_gate_failed)) and rolls back.
      - Empty (the default) skips the probe. C(base_url) defaults to this server's address.
    type: dict
    default: {}
  probe_against_last_good:
    description:
      - Gate the probe against this server's own previous figures - those measured by the last launch that reached
        ready, saved with its snapshot. A figure worse by more than the probe's C(baseline_tolerance) percent (default 5)
        fails the launch and rolls back. A rollout uses it so that a change which makes a host slower does not spread.
      - Ignored when O(probe) has its own C(baseline). Without saved figures (the first probed launch) only the other gates apply.
    type: bool
    default: false
  probe_api_key:
    description: The server's API key for the probe's requests.
    type: str
  secrets:
    description: Values to mask in everything returned (API keys, tokens), besides what looks like a secret.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    details: Reports whether a restart would happen and which files changed; touches nothing.
  diff_mode:
    support: partial
    details:
      - Shows each live file that its O(staged) copy replaces, secrets masked.
      - The diff of a change comes from the tasks that write the staged copies (M(gpufleet.sglang.sglang_preflight) with
        its C(dest) option, the templates); this module adds the live files that differ from them (a hand edit).
  platform:
    support: full
    platforms: posix
notes:
  - The cause labels and what to do about each are listed in the collection's C(docs/startup-failure-causes.md).
"""

EXAMPLES = r"""
- name: Launch the server, restart only when its files changed, roll back on failure
  gpufleet.sglang.sglang_launch:
    unit: sglang-main.service
    files:
      - /etc/sglang/main.yaml
      - /etc/sglang/main.env
      - /etc/sglang/gpu-tuning.env
      - /etc/systemd/system/sglang-main.service
    state_dir: /var/lib/sglang/main/launch
    port: 30000
    sglang_version: "0.5.23"
    secrets: ["{{ sglang_server_api_key }}"]
  register: launch

- name: A rolling restart without a config change
  gpufleet.sglang.sglang_launch:
    unit: sglang-main.service
    files: [/etc/sglang/main.yaml]
    state_dir: /var/lib/sglang/main/launch
    sglang_version: "0.5.23"
    state: restarted
"""

RETURN = r"""
restarted:
  description: Whether the unit was (or in check mode would be) restarted.
  type: bool
  returned: always
changed_files:
  description: Files whose content differs from the last launch that reached ready.
  type: list
  elements: str
  returned: always
ready:
  description: Whether the server is ready at the end (after a rollback, whether the rolled-back server is).
  type: bool
  returned: always
time_to_ready_s:
  description: Seconds from the restart to the readiness endpoint's first 200.
  type: float
  returned: when the launch reached ready
joined:
  description: Whether the node's journal said it joined the rendezvous (the end of its parallel init), for a serving group's verdict; also in C(failure).
  type: bool
  returned: when the launch reached ready
phases:
  description: Seconds from the restart to the first line of each startup phase.
  type: list
  elements: dict
  returned: when a launch was followed
probe:
  description: The probe's results (levels, gates, ceiling and efficiency), when O(probe) was given and the server got that far.
  type: dict
  returned: when probed
probe_baseline:
  description: Where the probe's regression gate took its baseline - C(option), C(last_good) (with the time those figures were measured) or C(none).
  type: str
  returned: when probed
last_good_probe:
  description:
    - The probe figures saved with the last launch that reached ready (levels, accept length, ceiling, efficiency,
      started_at), so a run that restarts nothing can still report how the server performs.
  type: dict
  returned: when the server was not restarted and such figures exist
failure:
  description: >-
    The diagnosis of a failed launch - outcome, reason, cause (a label from docs/startup-failure-causes.md, or
    stalled, timeout, unknown), hint, phase, phases, traceback (whole, the one that explains the failure),
    tracebacks (every traceback of the start, each whole), error_message and fatal_line (SGLang's own words
    whenever it printed any), systemd_line (systemd's own lines about the end, beside them), last_lines,
    unit state, joined (see RV(joined)). Secrets are masked.
  type: dict
  returned: when the launch failed
rolled_back:
  description: Whether the last good files were restored and the unit restarted with them.
  type: bool
  returned: always
rollback_ready:
  description: Whether the rolled-back server reached ready.
  type: bool
  returned: when rolled_back
rollback:
  description: How the rollback's own start went (same fields as a launch).
  type: dict
  returned: when rolled_back
readiness_url:
  description: The endpoint that decided readiness.
  type: str
  returned: always
swapped:
  description: The live files replaced by their staged copies in this run.
  type: list
  elements: str
  returned: always
soak:
  description: How the soak window went - C(seconds) watched after ready and C(healthy_checks) answered 200.
  type: dict
  returned: when the launch reached ready
snapshot_problems:
  description: What failed the last good snapshot's verification (a missing or damaged copy, a broken manifest).
  type: list
  elements: str
  returned: when the snapshot did not verify
snapshot_rebuilt:
  description: Why the last good snapshot was rebuilt from the running config before the launch.
  type: str
  returned: when it was
pending:
  description:
    - A node of a serving group whose launch passed - its files are kept as pending, the previous last good ones stay
      the way back until the group's verdict (O(state=group_passed) or O(state=group_failed)).
  type: bool
  returned: when a node of a serving group reached ready
group_action:
  description:
    - What the group's verdict did on this node - C(nothing), C(promote) (the pending snapshot became the last good
      one), C(discard) (a pending snapshot that no longer matched the files on disk), C(restore) (its last good files
      put back and restarted), C(restart) (restarted with its last good files with the group), C(stop) (nothing good
      to go back to), C(leave) (rollback is off).
  type: str
  returned: with O(state=group_passed) or O(state=group_failed)
after_group:
  description:
    - The fields of this node's launch result that the group's verdict changed (C(pending), C(rolled_back),
      C(rollback_ready), C(ready), C(rollback), C(restored_files), C(stopped)), to lay over it.
  type: dict
  returned: with O(state=group_passed) or O(state=group_failed)
has_pending:
  description: Whether a pending snapshot waits for a serving group's verdict.
  type: bool
  returned: with O(state=status)
previous_launch:
  description: The verdict the last launch wrote on the host (C(state) C(done), C(in_progress) or C(interrupted)).
  type: dict
  returned: when a launch ever ran here
last_launch:
  description: Same as RV(previous_launch), for O(state=status).
  type: dict
  returned: with O(state=status)
lock_holder:
  description: Who holds the launch lock (holder, pid, since), when another deploy holds it.
  type: dict
  returned: when the lock is held by another deploy
"""

import fcntl
import json
import os
import platform
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.runner import (
    ARGUMENT_SPEC as PROBE_SPEC, MUTUALLY_EXCLUSIVE as PROBE_EXCLUSIVE, ProbeError, probe_and_gate)
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import redact
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.plan import (
    ASK_READINESS, LEAVE, NOTHING, PROMOTE, RESTART, RESTORE, ROLL_BACK, STOP, WOULD_RESTART, LaunchPlan, plan_group_verdict,
    plan_launch)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import (
    SnapshotError, SwapError, changed_files, current_state, discard_snapshot, file_digest, files_checksum, load_manifest,
    pending_swaps, probe_figures, promote_snapshot, recover_snapshot, restore_snapshot, save_snapshot, snapshot_exists, snapshot_problems,
    swap_in)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import (
    JournalFollower, http_status, journal_cursor, journal_suppressed, main_started_at, parse_unit_show, readiness_path,
    show_unit, stopped_pids, unit_pids)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.watch import (
    EXIT_VERDICT_S, LINES_QUIET_S, TRACEBACK_GRACE_S, StartWatch, stopped_stall)

TICK_S = 0.1
PROBE_INTERVAL_S = 0.15
MAX_CATCH_UPS = 5  # one-shot journal reads after the exit (each some 20 ms), so a verdict never waits on them for long
GROUP_STATES = ("group_passed", "group_failed")  # a serving group's verdict on one node (Launcher.group_verdict)
LOCK_FILE = "launch.lock"  # in state_dir: one launch of an instance at a time on a host (the watchdog reads it too)
VERDICT_FILE = "last-launch.json"  # in state_dir: the last launch's verdict, for a controller that lost the connection


FollowJournal = Callable[..., Any]
"""Opens a follower, ``(unit, cursor, since_epoch=...)`` as :class:`JournalFollower` takes them; the follower's
``read(timeout)`` returns the :class:`JournalLine` entries that arrived, ``close()`` stops it."""
HttpCheck = Callable[..., Optional[int]]
"""``(host, port, path, timeout=...)`` -> the HTTP status of a GET, or None, as :func:`http_status`."""
RunProbe = Callable[[Dict[str, Any]], Tuple[Dict[str, Any], Optional[str]]]
"""The probe's validated options -> (its results, the missed gate or None), as :func:`probe_and_gate`."""


class LaunchTimings(NamedTuple):
    """How often the launch looks, and how long it waits for a dead process's last lines (tests shorten them)."""

    tick_s: float = TICK_S  # longest wait for a journal entry before the unit and HTTP are looked at again
    probe_interval_s: float = PROBE_INTERVAL_S  # between two readiness requests
    traceback_grace_s: float = TRACEBACK_GRACE_S  # see watch.TRACEBACK_GRACE_S
    exit_verdict_s: float = EXIT_VERDICT_S  # see watch.EXIT_VERDICT_S: the verdict comes this soon after the exit
    lines_quiet_s: float = LINES_QUIET_S  # see watch.LINES_QUIET_S


class ReadinessProber:
    """Polls the readiness endpoint in a thread so a slow answer (``/health`` runs a generation) never blocks
    following the journal and the unit."""

    def __init__(self, host: str, port: int, path: str, http_check: HttpCheck, interval: float = PROBE_INTERVAL_S) -> None:
        self.host, self.port, self.path = host, port, path
        self.http_check = http_check
        self.interval = interval
        self.timeout = 0.5 if path == "/ready" else 25.0
        self.status: Optional[int] = None
        self.status_path: str = path  # the endpoint the last answer came from
        self.checked_at: float = 0.0
        self.enabled = threading.Event()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stopped.is_set():
            if self.enabled.wait(timeout=0.05) and not self.stopped.is_set():
                path = self.path
                status = self.http_check(self.host, self.port, path, timeout=self.timeout)
                self.status, self.status_path, self.checked_at = status, path, time.time()
                self.stopped.wait(self.interval)

    def switch(self, path: str, timeout: float) -> None:
        """Probe another endpoint from now on (answers about the old one are dropped)."""
        if path != self.path:
            self.path, self.timeout, self.status = path, timeout, None

    def stop(self) -> None:
        self.stopped.set()
        self.enabled.set()
        self.thread.join(timeout=30)


class Launcher:  # pylint: disable=too-many-instance-attributes
    """The module's side effects around the pure plan and watch logic; one instance per task.

    What reaches outside the host's commands comes in as arguments (the journal follower, the HTTP check, the
    probe), so tests hand in fakes; :func:`main` hands in the real ones.
    """

    def __init__(self, module: AnsibleModule, *, follow_journal: FollowJournal, http_check: HttpCheck, probe: RunProbe,
                 timings: LaunchTimings = LaunchTimings()) -> None:
        self.module = module
        self.follow_journal = follow_journal
        self.http_check = http_check
        self.run_probe = probe
        self.timings = timings
        params = module.params
        self.unit: str = params["unit"]
        self.files: List[str] = params["files"]
        self.snapshot_dir = os.path.join(params["state_dir"], "last-good")
        # A node of a serving group keeps a launch that passed as pending until the group's verdict (state group_passed
        # or group_failed): rank 0 can still fail after a follower passed, and the group then goes back as one.
        self.pending_dir = os.path.join(params["state_dir"], "pending")
        self.in_group = params.get("group_role") in ("leader", "follower")
        self.host = "127.0.0.1" if params["host"] in ("0.0.0.0", "", "::") else params["host"]
        self.port: int = params["port"]
        self.follower = params.get("group_role") == "follower"
        # A follower's only HTTP is the dummy health server (always 200): it says the process is up, nothing more.
        self.path: str = params["readiness_path"] or ("/health" if self.follower else readiness_path(params["sglang_version"]))
        self.secrets = [s for s in params["secrets"] if s]
        self.hostname = platform.node() or "localhost"
        self.last_good_figures: Optional[Dict[str, Any]] = None
        self.state_dir: str = params["state_dir"]
        self.verdict_path = os.path.join(self.state_dir, VERDICT_FILE)
        self.lock_handle: Optional[Any] = None

    def run_command(self, args: List[str]) -> Any:
        return self.module.run_command(args)

    def systemctl(self, *args: str) -> None:
        rc, _out, err = self.module.run_command(["systemctl", *args])
        if rc != 0:
            self.module.fail_json(msg="systemctl %s failed: %s" % (" ".join(args), redact(err.strip(), self.secrets)), rc=rc)

    def is_ready_now(self) -> bool:
        props = show_unit(self.run_command, self.unit)
        if props.get("ActiveState") != "active":
            return False
        timeout = 0.5 if self.path == "/ready" else 25.0
        return self.http_check(self.host, self.port, self.path, timeout=timeout) == 200

    def launch_and_follow(self) -> Dict[str, Any]:
        """Restart the unit and follow it to a verdict."""
        params = self.module.params
        before = show_unit(self.run_command, self.unit)
        cursor = journal_cursor(self.run_command)
        started_at = time.time()
        follower = self.follow_journal(self.unit, cursor, since_epoch=started_at - 1)
        prober = ReadinessProber(self.host, self.port, self.path, self.http_check, interval=self.timings.probe_interval_s)
        watch = StartWatch(started_at=started_at, timeout=params["timeout"], stall_timeout=params["stall_timeout"],
                           stall_timeouts=params["stall_timeouts"], old_invocation=before.get("InvocationID", ""), secrets=self.secrets,
                           hostname=self.hostname, traceback_grace_s=self.timings.traceback_grace_s,
                           exit_verdict_s=self.timings.exit_verdict_s, lines_quiet_s=self.timings.lines_quiet_s,
                           ready_from_journal=self.follower)
        ready: Optional[Dict[str, Any]] = None
        answered_at = 0.0
        catch_ups = 0
        try:
            self.systemctl("daemon-reload")
            self.run_command(["systemctl", "reset-failed", self.unit])  # a finished crash loop's start limit would refuse the start
            self.systemctl("restart", "--no-block", self.unit)
            while True:
                # Never sleep past the moment the verdict is due (the exit's deadline): it lands within 0.5 s of the exit.
                due = watch.next_check(time.time())
                wait = self.timings.tick_s if due is None else min(self.timings.tick_s, max(0.005, due))
                for entry in follower.read(wait):
                    watch.on_entry(entry, time.time())
                now = time.time()
                watch.on_unit(show_unit(self.run_command, self.unit), now)
                if watch.exit_at is not None and hasattr(follower, "catch_up") and catch_ups < MAX_CATCH_UPS and (
                        catch_ups == 0 or watch.verdict_due(time.time())):
                    # journald tells followers late (it coalesces notifications for 250 ms), and can take in systemd's
                    # exit line before the dead process's last output: read the journal at once, at the exit and again
                    # right before the verdict, until a read brings nothing new
                    catch_ups += 1
                    late = follower.catch_up()
                    for entry in late:
                        watch.on_entry(entry, time.time())
                    if late and catch_ups > 1:
                        continue
                if watch.following_new_process and (ready is not None or not self.follower):
                    prober.enabled.set()  # a follower's dummy health answers only count in its soak
                    if ready is None and prober.status is not None:
                        watch.on_http(prober.status, prober.checked_at)
                if ready is None:
                    ready = watch.verdict(time.time())
                    if ready is not None and ready["outcome"] != "ready":
                        return self.explained(ready, started_at)
                    if ready is not None:
                        # /ready only says the server status is Up; /health runs one real generation, so a scheduler
                        # that hangs right after warmup shows up there (503 after SGLANG_HEALTH_CHECK_TIMEOUT).
                        prober.switch("/health", timeout=25.0)
                        answered_at = watch.http_ready_at or 0.0
                if ready is not None:
                    if prober.status_path == "/health" and prober.checked_at > answered_at:
                        answered_at = prober.checked_at  # each answer once: every 200 is one healthy check of the soak
                        watch.on_http(prober.status, prober.checked_at)
                    failure = watch.settle_verdict(time.time())
                    if failure is not None:
                        return self.explained(failure, started_at)
                    if watch.soaked(time.time(), params["soak_time"], params["soak_checks"]):
                        ready["soak"] = {"seconds": round(time.time() - (watch.http_ready_at or started_at), 3),
                                         "healthy_checks": watch.healthy_checks}
                        return ready
        finally:
            prober.stop()
            follower.close()

    def explained(self, failure: Dict[str, Any], started_at: float) -> Dict[str, Any]:
        """What the host can add to a failed start's diagnosis: whether a stall is a stopped process, and whether
        journald dropped some of the server's lines (then the diagnosis may lack the line that explains it)."""
        if failure.get("cause") == "stalled":
            failure = stopped_stall(failure, stopped_pids(unit_pids(self.run_command, self.unit)))
        dropped = journal_suppressed(self.run_command, self.unit, started_at - 1)
        if dropped:
            failure = dict(failure, journal_suppressed=dropped,
                           hint="%s (journald dropped %d of the server's log lines under its rate limit, so the line that explains "
                                "it may be missing: raise sglang_server_log_rate_limit_burst)" % (str(failure["hint"]).rstrip(". "), dropped))
        return failure

    def probe_params(self) -> Dict[str, Any]:
        """The probe's options with its defaults and types applied; bad ones fail the task before anything restarts."""
        wanted = dict(self.module.params["probe"])
        wanted.setdefault("base_url", "http://%s:%d" % (self.host, self.port))
        if self.module.params["probe_api_key"]:
            wanted.setdefault("api_key", self.module.params["probe_api_key"])
        if self.module.params["probe_against_last_good"] and wanted.get("baseline") is None and self.last_good_figures:
            wanted["baseline"] = {"levels": self.last_good_figures["levels"]}
        checked = ArgumentSpecValidator(PROBE_SPEC, mutually_exclusive=PROBE_EXCLUSIVE).validate(wanted)
        if checked.error_messages:
            self.module.fail_json(msg="sglang_launch: probe options: %s" % "; ".join(checked.error_messages))
        return checked.validated_parameters

    def probe_gate(self, launch: Dict[str, Any], result: Dict[str, Any]) -> Dict[str, Any]:
        """Probe the ready server; a missed gate turns the launch into a failure that rolls back."""
        try:
            probe, missed = self.run_probe(self.probe_params())
        except ProbeError as exc:
            probe, missed = {}, "the probe could not measure: %s" % exc
        result["probe"] = probe
        result["probe_baseline"] = self.baseline_source()
        if missed is None:
            return launch
        failed = dict(launch, outcome="failed", reason="the probe gate missed", cause="probe_gate_failed",
                      hint=redact(missed, self.secrets), traceback=None, error_message=None, last_lines=[])
        return failed

    def baseline_source(self) -> str:
        """What the regression gate compared against, in words for the result."""
        if self.module.params["probe"].get("baseline") is not None:
            return "option"
        if self.module.params["probe_against_last_good"] and self.last_good_figures:
            return "last_good (measured %s)" % self.last_good_figures.get("started_at", "at an unknown time")
        return "none"

    def plan(self, manifest: Optional[Dict[str, Any]], desired: Dict[str, Optional[str]], written: bool) -> LaunchPlan:
        """The plan for this task; the unit's readiness is looked at only when nothing else decides.

        ``desired`` is what the files will hold once the staged copies are in place; ``written`` whether this run
        writes any file (its tasks did, or a staged copy differs from its live file).
        """
        params = self.module.params
        changed = changed_files(desired, manifest)
        facts = {"has_last_good": manifest is not None, "changed": changed, "files_changed": written,
                 "state": params["state"], "check_mode": self.module.check_mode, "rollback": params["rollback"]}
        staged_known = bool(params["staged"]) and not params["files_changed"]
        if manifest is not None and written and not changed and (staged_known or not self.module.check_mode):
            # This run writes files back to their last good content: someone had changed them. If the process is not the
            # one that reached ready, it may run with the hand-made settings (drift), and writing the file back is not enough.
            running = show_unit(self.run_command, self.unit).get("InvocationID", "")
            facts["drifted"] = running != manifest.get("invocation")
            if self.module.check_mode:
                facts["files_changed"] = facts["drifted"]  # the staged copies say what would be written: no guess needed
        plan = plan_launch(**facts)
        if plan.action == ASK_READINESS:
            plan = plan_launch(ready_now=self.is_ready_now(), **facts)
        return plan

    def staged_pairs(self) -> List[Tuple[str, str]]:
        return [(item["src"], item["dest"]) for item in self.module.params["staged"]]

    def pending(self) -> List[Tuple[str, str]]:
        """The staged copies that differ from their live files; a missing one fails the task before anything changes.

        In check mode the tasks that write the staged copies wrote nothing (they said what they would write, and
        ``files_changed`` carries that), so a copy that is not there yet is not a failed write.
        """
        pairs = self.staged_pairs()
        if self.module.check_mode:
            pairs = [(src, dest) for src, dest in pairs if os.path.isfile(src)]
        try:
            return pending_swaps(pairs)
        except SwapError as exc:
            self.module.fail_json(msg="sglang_launch: %s" % exc, restarted=False, changed=False, unit=self.unit)
            raise  # not reached: fail_json exits

    def diffs(self, pending: List[Tuple[str, str]]) -> List[Dict[str, str]]:
        """Diff-mode view of the live files the swap would replace, secrets masked."""
        out = []
        for src, dest in pending:
            out.append({"before_header": dest, "after_header": dest, "before": redact(read_text(dest), self.secrets),
                        "after": redact(read_text(src), self.secrets)})
        return out

    def swap(self, pending: List[Tuple[str, str]], result: Dict[str, Any]) -> None:
        """Put the staged copies in place together (or, failing, leave the old set whole and fail the task)."""
        if not pending:
            return
        try:
            result["swapped"] = swap_in(pending)
        except SwapError as exc:
            self.module.fail_json(msg="sglang_launch: %s. Nothing was restarted." % redact(str(exc), self.secrets),
                                  restarted=False, changed=False, unit=self.unit)
        if any(dest.endswith((".service", ".conf")) for _src, dest in pending):
            self.systemctl("daemon-reload")  # systemd reads a unit when told to; a swapped unit is read now

    # ------------------------------------------------------------------------------------------- the way back
    def way_back(self, result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The verified last good manifest, or None when nothing ever reached ready here and nothing runs.

        A launch never starts without a verified way back: a snapshot that is missing while the server runs, or one
        that fails its checksums, is rebuilt from the running config when the server is healthy now and every file
        on disk is the one it started with; otherwise the task fails before anything restarts and says why.
        """
        problems = snapshot_problems(self.snapshot_dir)
        if snapshot_exists(self.snapshot_dir) and not problems:
            return load_manifest(self.snapshot_dir)
        props = parse_unit_show(self.run_command(["systemctl", "show", "-p", "ActiveState,InvocationID,ExecMainStartTimestampMonotonic",
                                                  self.unit])[1])
        if problems:
            result["snapshot_problems"] = problems
        if props.get("ActiveState") != "active" or not self.module.params["rollback"]:
            return None  # no server runs (a first deploy, a stopped box), or rollback is off: nothing to go back to
        why = "; ".join(problems) if problems else "no last good snapshot exists (%s)" % self.snapshot_dir
        started = main_started_at(props, time.time(), time.monotonic())
        newer = [path for path in self.files if os.path.exists(path) and (started is None or os.stat(path).st_mtime > started)]
        if newer and self.disk_is_last_good():
            newer = []  # written since, but with the content the intact manifest recorded for the last good launch
        if not self.is_ready_now():
            blocker = "the running server is not healthy now, so its config cannot serve as the way back"
        elif newer:
            blocker = "files were written after the running server started (%s), so the disk no longer holds its config" % ", ".join(newer)
        else:
            blocker = None
        if blocker:
            self.module.fail_json(msg="sglang_launch: %s has no verified way back: %s, and %s. Nothing was restarted. Put the last "
                                      "good files back by hand and run again, or set sglang_server_rollback: false to launch "
                                      "without a way back." % (self.unit, why, blocker),
                                  snapshot_problems=problems, restarted=False, changed=False, unit=self.unit)
        result["snapshot_rebuilt"] = "%s: rebuilt from the running config (healthy, its files unchanged since it started)" % why
        extra = {"ready_at": time.time(), "unit": self.unit, "invocation": props.get("InvocationID", ""), "rebuilt": True,
                 "endpoint": {"host": self.host, "port": self.port, "path": self.path}}
        if self.module.check_mode:
            state = current_state(self.files)
            return dict(extra, files={path: ({"sha256": digest} if digest else None) for path, digest in state.items()})
        return save_snapshot(self.snapshot_dir, self.files, extra)

    def disk_is_last_good(self) -> bool:
        """Whether the files on disk have exactly the content a manifest with an intact file list recorded (its stored
        copies may be damaged: the disk then holds the last good content, and the copies can be made again)."""
        try:
            with open(os.path.join(self.snapshot_dir, "manifest.json"), encoding="utf-8") as handle:
                manifest = json.load(handle)
        except (OSError, ValueError):
            return False
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
            return False
        if manifest.get("files_sha256") != files_checksum(manifest["files"]):
            return False
        return not changed_files(current_state(self.files), manifest)

    # ------------------------------------------------------------------------------------------- one at a time
    def lock(self) -> None:
        """Hold the instance's launch lock for this task; wait for it at most lock_timeout seconds, then fail with who
        holds it since when. A second deploy of the same instance waits here instead of restarting under the first."""
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        path = os.path.join(self.state_dir, LOCK_FILE)
        handle = open(path, "a+", encoding="utf-8")  # pylint: disable=consider-using-with
        deadline = time.time() + self.module.params["lock_timeout"]
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.time() >= deadline:
                    handle.seek(0)
                    holder = read_json_text(handle.read())
                    handle.close()
                    self.module.fail_json(msg="sglang_launch: another deploy holds the launch lock of %s: %s; waited %.0f s "
                                              "(sglang_server_lock_timeout)" % (self.unit, describe_holder(holder),
                                                                                self.module.params["lock_timeout"]),
                                          lock_holder=holder, restarted=False, changed=False, unit=self.unit)
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "since": time.time(), "holder": self.module.params["holder"] or "unknown",
                                 "unit": self.unit}))
        handle.flush()
        self.lock_handle = handle

    def unlock(self) -> None:
        if self.lock_handle is not None:
            self.lock_handle.truncate(0)
            fcntl.flock(self.lock_handle.fileno(), fcntl.LOCK_UN)
            self.lock_handle.close()
            self.lock_handle = None

    def write_verdict(self, record: Dict[str, Any]) -> None:
        """The launch's verdict on the host (mode 0600, secrets masked): a controller that lost the connection reads it
        with the next run or a ``state: status`` call."""
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        tmp = self.verdict_path + ".tmp"
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
            handle.write(redact(json.dumps(record, sort_keys=True, default=str), self.secrets))
        os.replace(tmp, self.verdict_path)

    def previous_launch(self) -> Optional[Dict[str, Any]]:
        """The last launch's verdict as written on the host; one that never finished says so."""
        try:
            with open(self.verdict_path, encoding="utf-8") as handle:
                record = read_json_text(handle.read())
        except OSError:
            return None
        if record.get("state") == "in_progress" and not pid_alive(record.get("pid")):
            note = "the launch's module process ended without a verdict (killed, or the host rebooted); the files on disk are what it left"
            record = dict(record, state="interrupted", note=note)
        return record or None

    def status(self) -> Dict[str, Any]:
        """``state: status``: what the host knows, touching nothing - the last verdict, the lock, the snapshot."""
        result: Dict[str, Any] = {"changed": False, "restarted": False, "rolled_back": False, "ready": self.is_ready_now(),
                                  "unit": self.unit, "readiness_url": "http://%s:%d%s" % (self.host, self.port, self.path),
                                  "last_launch": self.previous_launch(), "snapshot_problems": snapshot_problems(self.snapshot_dir),
                                  "has_last_good": snapshot_exists(self.snapshot_dir), "changed_files": [],
                                  "has_pending": snapshot_exists(self.pending_dir)}
        try:
            with open(os.path.join(self.state_dir, LOCK_FILE), "r+", encoding="utf-8") as handle:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                except OSError:
                    result["lock_holder"] = read_json_text(handle.read())
        except OSError:
            pass
        return result

    def run(self) -> Dict[str, Any]:
        if self.module.params["state"] == "status":
            return self.status()
        previous = self.previous_launch()
        if not self.module.check_mode:
            self.lock()
            if recover_snapshot(self.snapshot_dir):
                self.module.warn("sglang_launch: the last good snapshot was only in %s.old (a replacement of it was "
                                 "interrupted); it is back in place" % self.snapshot_dir)
        try:
            result = self.group_verdict() if self.module.params["state"] in GROUP_STATES else self.run_locked()
        finally:
            self.unlock()
        if previous:
            result["previous_launch"] = previous
        return result

    def run_locked(self) -> Dict[str, Any]:
        result: Dict[str, Any] = {"changed": False, "restarted": False, "ready": False, "rolled_back": False,
                                  "readiness_url": "http://%s:%d%s" % (self.host, self.port, self.path), "unit": self.unit,
                                  "swapped": []}
        if self.module.params["probe"]:
            self.probe_params()
        pending = self.pending()
        desired = current_state(self.files)
        desired.update({dest: file_digest(src) for src, dest in pending})
        manifest = self.way_back(result)  # before the swap: the live files are still what runs
        self.last_good_figures = probe_figures((manifest or {}).get("probe"))
        plan = self.plan(manifest, desired, self.module.params["files_changed"] or bool(pending))
        result["changed_files"] = plan.changed_files
        if pending and self.module._diff:  # pylint: disable=protected-access
            result["diff"] = self.diffs(pending)
        if pending:
            result["changed"] = True  # the live files are (or in check mode would be) replaced by their staged copies
        if plan.action == NOTHING:
            if not self.module.check_mode:
                self.swap(pending, result)
            result["ready"] = True
            if self.last_good_figures:
                result["last_good_probe"] = self.last_good_figures
            if result.get("snapshot_rebuilt"):
                result["changed"] = True  # the snapshot folder was (or in check mode would be) written
            return result
        result.update(changed=True, restarted=True)
        if plan.action == WOULD_RESTART:
            result["msg"] = "would restart %s (%s)" % (self.unit, plan.reason)
            return result

        self.swap(pending, result)
        if self.in_group:
            discard_snapshot(self.pending_dir)  # one a run left without the group's verdict: this launch decides anew
        self.write_verdict({"state": "in_progress", "pid": os.getpid(), "started_at": time.time(), "unit": self.unit,
                            "reason": plan.reason, "changed_files": plan.changed_files})
        launched_with = current_state(self.files)
        launch = self.launch_and_follow()
        result["phases"] = launch.get("phases", [])
        if launch["outcome"] == "ready" and self.module.params["probe"]:
            launch = self.probe_gate(launch, result)
        if launch["outcome"] == "ready" and current_state(self.files) != launched_with:
            launch = dict(launch, outcome="failed", reason="the launch's files changed while it ran (another writer)",
                          cause="files_changed_during_launch", hint="the server runs the files it started with, which are no longer "
                          "on disk: find the other writer, then run again", traceback=None, error_message=None, last_lines=[])
            plan = plan._replace(on_failure=LEAVE)
        if launch["outcome"] == "ready":
            self.keep_as_last_good(launch, result)
        else:
            result["failure"] = launch
            self.recover(plan, manifest, result)
            result["msg"] = failure_message(self.unit, launch, result)
        self.write_verdict({"state": "done", "finished_at": time.time(), "unit": self.unit, "reason": plan.reason,
                            "outcome": launch["outcome"], "ready": result["ready"], "rolled_back": result["rolled_back"],
                            "rollback_ready": result.get("rollback_ready"), "failure": result.get("failure"),
                            "msg": result.get("msg"), "soak": launch.get("soak"), "time_to_ready_s": result.get("time_to_ready_s"),
                            "swapped": result.get("swapped", []), "snapshot_rebuilt": result.get("snapshot_rebuilt")})
        return result

    def keep_as_last_good(self, launch: Dict[str, Any], result: Dict[str, Any]) -> None:
        """Snapshot the files that just reached ready and passed the soak (with the probe's figures, if any) and report
        the start."""
        props = show_unit(self.run_command, self.unit)
        extra = {"ready_at": time.time(), "unit": self.unit, "endpoint": {"host": self.host, "port": self.port, "path": self.path},
                 "invocation": props.get("InvocationID", "")}
        # Figures travel with the files they were measured on: a launch without a probe keeps none.
        figures = probe_figures(result.get("probe"))
        if figures:
            extra["probe"] = figures
        # A node of a serving group: pending until the group's verdict; the previous last good one stays the way back.
        save_snapshot(self.pending_dir if self.in_group else self.snapshot_dir, self.files, extra)
        if self.in_group:
            result["pending"] = True
        result.update(ready=True, time_to_ready_s=launch["elapsed_s"], ready_noticed_at=launch["ready_noticed_at"],
                      main_pid=launch["main_pid"], restarts=launch["restarts"], ready_line=launch.get("ready_line"),
                      soak=launch.get("soak"), joined=launch.get("joined"))

    def recover(self, plan: LaunchPlan, manifest: Optional[Dict[str, Any]], result: Dict[str, Any]) -> None:
        """After a failed start, do what the plan says: roll back to the last good files, stop the unit, or leave it."""
        if plan.on_failure == ROLL_BACK and manifest is not None:
            self.back_to_last_good(manifest, result, restore=True)
        elif plan.on_failure == STOP:
            # Nothing good to go back to: stop, so a crash loop or a hung start does not hold the GPUs.
            self.run_command(["systemctl", "stop", self.unit])
            result["stopped"] = True

    def back_to_last_good(self, manifest: Dict[str, Any], result: Dict[str, Any], *, restore: bool) -> None:
        """Put the last good files back (``restore``; else they are on disk already), restart and follow the unit."""
        restored: List[str] = []
        if restore:
            try:
                restored = restore_snapshot(self.snapshot_dir, manifest)
            except SnapshotError as exc:
                # Checked before the launch, damaged since: put nothing back, stop rather than run a config nobody chose.
                self.run_command(["systemctl", "stop", self.unit])
                result.update(stopped=True, rollback_error=str(exc), ready=False)
                return
        # The last good config may listen elsewhere than the one that failed (a port change).
        endpoint = manifest.get("endpoint") or {}
        self.host, self.port, self.path = endpoint.get("host", self.host), endpoint.get("port", self.port), endpoint.get("path", self.path)
        rollback = self.launch_and_follow()
        result.update(rolled_back=True, restored_files=restored, rollback=rollback, rollback_ready=rollback["outcome"] == "ready",
                      ready=rollback["outcome"] == "ready")
        if rollback["outcome"] == "ready":
            # The process that runs the last good files now is the rollback's: a later drift check compares with it.
            extra = {key: value for key, value in manifest.items() if key not in ("files", "files_sha256", "format")}
            extra["invocation"] = show_unit(self.run_command, self.unit).get("InvocationID", "")
            save_snapshot(self.snapshot_dir, self.files, extra)

    # ------------------------------------------------------------------------------------------- a serving group
    def group_verdict(self) -> Dict[str, Any]:
        """``state: group_passed`` / ``group_failed``: what the group's verdict does on this node (plan_group_verdict).

        Passed: the launch kept as pending becomes the last good one. Failed: a node whose own launch passed restores
        its last good files (kept untouched until now), and with ``group_restart`` every node restarts with its last
        good files together, as a group restarts as one. ``after_group`` holds the fields of the node's launch result
        that this changed, for the group's message and the records.
        """
        params = self.module.params
        result: Dict[str, Any] = {"changed": False, "restarted": False, "rolled_back": False, "unit": self.unit, "changed_files": [],
                                  "readiness_url": "http://%s:%d%s" % (self.host, self.port, self.path), "swapped": [], "after_group": {}}
        pending = load_manifest(self.pending_dir) if snapshot_exists(self.pending_dir) else None
        pending_ok = pending is not None and not snapshot_problems(self.pending_dir)
        manifest = load_manifest(self.snapshot_dir) if snapshot_exists(self.snapshot_dir) and not snapshot_problems(self.snapshot_dir) else None
        plan = plan_group_verdict(passed=params["state"] == "group_passed", has_pending=pending is not None,
                                  pending_matches_disk=pending_ok and not changed_files(current_state(self.files), pending),
                                  has_last_good=manifest is not None, group_restart=bool(params.get("group_restart")), rollback=params["rollback"])
        result["group_action"] = plan.action
        if plan.action == NOTHING:
            return result
        result.update(changed=True, restarted=plan.action in (RESTORE, RESTART))
        if pending is not None and plan.action in (RESTORE, STOP):
            result["changed_files"] = changed_files(current_state(self.files), manifest) if manifest else sorted(self.files)
        if self.module.check_mode:
            result["msg"] = "the group's verdict would %s on %s" % (plan.action, self.unit)
            return result
        if plan.action == PROMOTE:
            promote_snapshot(self.pending_dir, self.snapshot_dir)
        elif plan.drop_pending:
            discard_snapshot(self.pending_dir)  # the group did not approve it (or it is stale): the last good one stays
        after: Dict[str, Any] = {"pending": False}
        if plan.action == STOP:
            # Its first launch passed, the group failed: nothing good to go back to; stop so it holds no GPUs.
            self.run_command(["systemctl", "stop", self.unit])
            result["stopped"] = True
            after.update(stopped=True, ready=False)
        elif plan.action in (RESTORE, RESTART) and manifest is not None:
            self.back_to_last_good(manifest, result, restore=plan.action == RESTORE)
            after.update({key: result[key] for key in ("rolled_back", "rollback_ready", "ready", "rollback", "restored_files", "stopped",
                                                       "rollback_error") if key in result})
        result["after_group"] = after
        record = self.previous_launch() or {}
        record["group_verdict"] = {"action": plan.action, "at": time.time(), "ready": result.get("ready"),
                                   "rolled_back": result["rolled_back"], "stopped": result.get("stopped", False)}
        self.write_verdict(record)
        return result


def read_text(path: str) -> str:
    """A small text file's content for a diff ('' when it does not exist)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def read_json_text(text: str) -> Dict[str, Any]:
    """A JSON object from a state file; {} when it is empty or broken (a file half written by a killed process)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def describe_holder(holder: Dict[str, Any]) -> str:
    """Who holds the launch lock since when, in words."""
    since = holder.get("since")
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(since)) if isinstance(since, (int, float)) else "an unknown time"
    return "%s (PID %s on this host) since %s" % (holder.get("holder", "an unknown deploy"), holder.get("pid", "?"), when)


def pid_alive(pid: Any) -> bool:
    """Whether a process with this PID exists on the host."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    return os.path.exists("/proc/%d" % pid)


def failure_message(unit: str, launch: Dict[str, Any], result: Dict[str, Any]) -> str:
    """One paragraph an operator can act on: what failed, where, why, what to do, and the rollback."""
    text = "SGLang (%s) failed to start: %s; cause %s in phase %s." % (unit, launch["reason"], launch["cause"], launch.get("phase") or "none")
    if launch.get("error_message"):
        text += " Error: %s." % launch["error_message"]
    systemd_line = (launch.get("systemd_line") or "").split("\n")[0]
    if systemd_line and systemd_line != launch.get("error_message"):
        text += " systemd: %s." % systemd_line.rstrip(".")
    text += " Hint: %s." % str(launch["hint"]).rstrip(". ")
    if result.get("rolled_back"):
        rollback = result["rollback"]
        if rollback["outcome"] == "ready":
            text += " Rolled back to the last good config: ready again in %.1f s." % rollback["elapsed_s"]
        else:
            text += " Rolled back to the last good config, but it did not reach ready either (%s)." % rollback["reason"]
    elif result.get("stopped"):
        text += " No earlier config ever reached ready on this host, so there is nothing to roll back to; the unit was stopped."
    else:
        text += " Nothing was rolled back (the files are those of the last good launch, or rollback is off)."
    text += " The whole traceback and the last log lines are in the result (failure.traceback, failure.last_lines)."
    return text


def main(follow_journal: FollowJournal = JournalFollower, http_check: HttpCheck = http_status, probe: RunProbe = probe_and_gate) -> None:
    """The module; what reaches outside the host's commands is an argument, so tests can hand in fakes."""
    module = AnsibleModule(
        argument_spec={
            "unit": {"type": "str", "required": True},
            "files": {"type": "list", "elements": "path", "required": True},
            "files_changed": {"type": "bool", "default": False},
            "staged": {"type": "list", "elements": "dict", "default": [],
                       "options": {"src": {"type": "path", "required": True}, "dest": {"type": "path", "required": True}}},
            "state_dir": {"type": "path", "required": True},
            "state": {"type": "str", "choices": ["started", "restarted", "status", "group_passed", "group_failed"], "default": "started"},
            "host": {"type": "str", "default": "127.0.0.1"},
            "port": {"type": "int", "default": 30000},
            "sglang_version": {"type": "str", "required": True},
            "readiness_path": {"type": "str"},
            "group_role": {"type": "str", "choices": ["single", "leader", "follower"], "default": "single"},
            "group_restart": {"type": "bool", "default": False},
            "timeout": {"type": "float", "default": 1800},
            "stall_timeout": {"type": "float", "default": 600},
            "stall_timeouts": {"type": "dict", "default": {}},
            "rollback": {"type": "bool", "default": True},
            "soak_time": {"type": "float", "default": 30, "aliases": ["settle_time"]},
            "soak_checks": {"type": "int", "default": 3},
            "lock_timeout": {"type": "float", "default": 300},
            "holder": {"type": "str", "default": ""},
            "probe": {"type": "dict", "default": {}},
            "probe_against_last_good": {"type": "bool", "default": False},
            "probe_api_key": {"type": "str", "no_log": True},
            "secrets": {"type": "list", "elements": "str", "default": [], "no_log": True},
        },
        supports_check_mode=True,
    )
    unknown = [item["dest"] for item in module.params["staged"] if item["dest"] not in module.params["files"]]
    if unknown:
        module.fail_json(msg="sglang_launch: staged: %s not among files" % ", ".join(unknown))
    result = Launcher(module, follow_journal=follow_journal, http_check=http_check, probe=probe).run()
    if result.get("failure"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
