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
    A phase without a new log line for its stall timeout fails as C(stalled).
  - On failure the last set of files that reached ready is put back, the unit restarted and followed; the task
    still fails and reports both the failure and the rollback. Secrets are redacted from everything returned.
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
      - Set it from the tasks that wrote O(files) in this run. In check mode nothing was written, so this is how
        the module can tell that a restart would follow.
    type: bool
    default: false
  state_dir:
    description: Folder for the last-good snapshot (created with mode 0700, it holds the config with its secrets).
    type: path
    required: true
  state:
    description: C(started) restarts only when needed; C(restarted) always restarts (a rolling restart).
    type: str
    choices: [started, restarted]
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
  settle_time:
    description:
      - Seconds to keep watching after the first ready answer. A server that exits or stops answering ready in that
        time has not launched (causes C(crashed_after_ready), C(unhealthy_after_ready)) and is rolled back.
    type: float
    default: 5
  rollback:
    description: Put the last files that reached ready back after a failed start, and restart with them.
    type: bool
    default: true
  probe:
    description:
      - The last gate of a launch - after ready (and the settle time), run M(gpufleet.sglang.sglang_probe) with these
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
    support: none
    details: The config's diff comes from the task that writes it (M(gpufleet.sglang.sglang_preflight) with its C(dest) option).
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
    unit state. Secrets are masked.
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
"""

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
    ASK_READINESS, NOTHING, ROLL_BACK, STOP, WOULD_RESTART, LaunchPlan, plan_launch)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.snapshot import (
    changed_files, current_state, load_manifest, restore_snapshot, save_snapshot)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.systemd import (
    JournalFollower, http_status, journal_cursor, readiness_path, show_unit)
from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.watch import (
    EXIT_VERDICT_S, LINES_QUIET_S, TRACEBACK_GRACE_S, StartWatch)

TICK_S = 0.1
PROBE_INTERVAL_S = 0.15
MAX_CATCH_UPS = 5  # one-shot journal reads after the exit (each some 20 ms), so a verdict never waits on them for long


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
        self.checked_at: float = 0.0
        self.enabled = threading.Event()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stopped.is_set():
            if self.enabled.wait(timeout=0.05) and not self.stopped.is_set():
                status = self.http_check(self.host, self.port, self.path, timeout=self.timeout)
                self.status, self.checked_at = status, time.time()
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
        self.host = "127.0.0.1" if params["host"] in ("0.0.0.0", "", "::") else params["host"]
        self.port: int = params["port"]
        self.path: str = params["readiness_path"] or readiness_path(params["sglang_version"])
        self.secrets = [s for s in params["secrets"] if s]
        self.hostname = platform.node() or "localhost"
        self.last_good_figures: Optional[Dict[str, Any]] = None

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
                           exit_verdict_s=self.timings.exit_verdict_s, lines_quiet_s=self.timings.lines_quiet_s)
        ready: Optional[Dict[str, Any]] = None
        settle_until = 0.0
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
                if watch.following_new_process:
                    prober.enabled.set()
                    if prober.status is not None:
                        watch.on_http(prober.status, prober.checked_at)
                if ready is None:
                    ready = watch.verdict(time.time())
                    if ready is not None and ready["outcome"] != "ready":
                        return ready
                    settle_until = time.time() + params["settle_time"]
                if ready is not None:
                    # /ready only says the server status is Up; /health runs one real generation, so a scheduler
                    # that hangs right after warmup shows up there (503 after SGLANG_HEALTH_CHECK_TIMEOUT).
                    prober.switch("/health", timeout=25.0)
                    if prober.status is not None and prober.checked_at > (watch.http_ready_at or 0):
                        watch.on_http(prober.status, prober.checked_at)
                    failure = watch.settle_verdict(time.time())
                    if failure is not None:
                        return failure
                    if time.time() >= settle_until and watch.exit_reason is None and watch.readiness_lost_at is None:
                        return ready
        finally:
            prober.stop()
            follower.close()

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

    def plan(self, manifest: Optional[Dict[str, Any]]) -> LaunchPlan:
        """The plan for this task; the unit's readiness is looked at only when nothing else decides."""
        params = self.module.params
        facts = {"has_last_good": manifest is not None, "changed": changed_files(current_state(self.files), manifest),
                 "files_changed": params["files_changed"], "state": params["state"], "check_mode": self.module.check_mode,
                 "rollback": params["rollback"]}
        plan = plan_launch(**facts)
        if plan.action == ASK_READINESS:
            plan = plan_launch(ready_now=self.is_ready_now(), **facts)
        return plan

    def run(self) -> Dict[str, Any]:
        manifest = load_manifest(self.snapshot_dir)
        self.last_good_figures = probe_figures((manifest or {}).get("probe"))
        plan = self.plan(manifest)
        result: Dict[str, Any] = {"changed": False, "restarted": False, "changed_files": plan.changed_files, "ready": False,
                                  "rolled_back": False, "readiness_url": "http://%s:%d%s" % (self.host, self.port, self.path),
                                  "unit": self.unit}
        if self.module.params["probe"]:
            self.probe_params()
        if plan.action == NOTHING:
            result["ready"] = True
            if self.last_good_figures:
                result["last_good_probe"] = self.last_good_figures
            return result
        result.update(changed=True, restarted=True)
        if plan.action == WOULD_RESTART:
            result["msg"] = "would restart %s (%s)" % (self.unit, plan.reason)
            return result

        launch = self.launch_and_follow()
        result["phases"] = launch.get("phases", [])
        if launch["outcome"] == "ready" and self.module.params["probe"]:
            launch = self.probe_gate(launch, result)
        if launch["outcome"] == "ready":
            self.keep_as_last_good(launch, result)
            return result
        result["failure"] = launch
        self.recover(plan, manifest, result)
        result["msg"] = failure_message(self.unit, launch, result)
        return result

    def keep_as_last_good(self, launch: Dict[str, Any], result: Dict[str, Any]) -> None:
        """Snapshot the files that just reached ready (with the probe's figures, if any) and report the start."""
        extra = {"ready_at": time.time(), "unit": self.unit, "endpoint": {"host": self.host, "port": self.port, "path": self.path}}
        # Figures travel with the files they were measured on: a launch without a probe keeps none.
        figures = probe_figures(result.get("probe"))
        if figures:
            extra["probe"] = figures
        save_snapshot(self.snapshot_dir, self.files, extra)
        result.update(ready=True, time_to_ready_s=launch["elapsed_s"], ready_noticed_at=launch["ready_noticed_at"],
                      main_pid=launch["main_pid"], restarts=launch["restarts"], ready_line=launch.get("ready_line"))

    def recover(self, plan: LaunchPlan, manifest: Optional[Dict[str, Any]], result: Dict[str, Any]) -> None:
        """After a failed start, do what the plan says: roll back to the last good files, stop the unit, or leave it."""
        if plan.on_failure == ROLL_BACK and manifest is not None:
            restored = restore_snapshot(self.snapshot_dir, manifest)
            # The last good config may listen elsewhere than the one that failed (a port change).
            endpoint = manifest.get("endpoint") or {}
            self.host, self.port, self.path = endpoint.get("host", self.host), endpoint.get("port", self.port), endpoint.get("path", self.path)
            rollback = self.launch_and_follow()
            result.update(rolled_back=True, restored_files=restored, rollback=rollback, rollback_ready=rollback["outcome"] == "ready",
                          ready=rollback["outcome"] == "ready")
        elif plan.on_failure == STOP:
            # Nothing good to go back to: stop, so a crash loop or a hung start does not hold the GPUs.
            self.run_command(["systemctl", "stop", self.unit])
            result["stopped"] = True


def probe_figures(probe: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The part of a probe result worth keeping as the next launch's baseline and for summaries (no Markdown,
    no per-request rows); None when there is nothing measured."""
    if not isinstance(probe, dict) or not isinstance(probe.get("levels"), list) or not probe["levels"]:
        return None
    levels = [{k: v for k, v in level.items() if k != "request_details"} for level in probe["levels"] if isinstance(level, dict)]
    keep = ("started_at", "model", "server_version", "endpoint", "output_tokens", "accept_length", "ceiling", "efficiency",
            "efficiency_concurrency", "verdict")
    figures = {k: probe.get(k) for k in keep if probe.get(k) is not None}
    figures["levels"] = levels
    return figures


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
            "state_dir": {"type": "path", "required": True},
            "state": {"type": "str", "choices": ["started", "restarted"], "default": "started"},
            "host": {"type": "str", "default": "127.0.0.1"},
            "port": {"type": "int", "default": 30000},
            "sglang_version": {"type": "str", "required": True},
            "readiness_path": {"type": "str"},
            "timeout": {"type": "float", "default": 1800},
            "stall_timeout": {"type": "float", "default": 600},
            "stall_timeouts": {"type": "dict", "default": {}},
            "rollback": {"type": "bool", "default": True},
            "settle_time": {"type": "float", "default": 5},
            "probe": {"type": "dict", "default": {}},
            "probe_against_last_good": {"type": "bool", "default": False},
            "probe_api_key": {"type": "str", "no_log": True},
            "secrets": {"type": "list", "elements": "str", "default": [], "no_log": True},
        },
        supports_check_mode=True,
    )
    result = Launcher(module, follow_journal=follow_journal, http_check=http_check, probe=probe).run()
    if result.get("failure"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
