#!/usr/bin/env python
"""What does a run cost when there is nothing to do? Per-task timings of converged runs, printed as JSON.

Boots 8 lab hosts of the story's kind (inventory/lab's a6000_pcie group_vars, as benchmarks/rollout_scaling.py
does) in the lab's instance 2 (GPUFLEET_LAB_INSTANCE=2: its own bridge, subnet and state, so it never meets
Molecule's or another checkout's hosts), deploys them once (not timed), then times:

- a converged one-host deploy: deploy.yml --limit the first host, which must report changed=0;
- a converged 8-host rollout: rollout.yml with the same settings (a canary, then 25% per batch), where every host
  must end "unchanged"; its figure per batch is the wall time over the number of batches.

Each run's tasks come from a callback of this folder (callback_plugins/task_timing.py): wall time per task (the
slowest host of a batch), its role, and how many hosts it reached (a task that runs on a host, skipped or not
by its own module, is one SSH round trip there). The JSON names the slowest tasks, the time per role, and the
round trips per host.

--ref COMMIT measures an older commit too, in the same invocation and on the same hosts: a `git worktree` of
it under build/bench/, with its own playbooks, roles and plugins (this checkout's venv runs both). Each variant
first deploys all hosts once untimed (so the timed runs start converged for that variant's code), then is timed.

    benchmarks/converged_run.py [--ref COMMIT] [--at COMMIT] [--after-first] [--hosts 8] [--repeat 1] [--keep]
                                                          (root; `make wheelhouse lab-rootfs`)

--at COMMIT measures that commit (a worktree too) as the "after" variant instead of this checkout's working tree.

The exit status is 1 when the measured variant (not the --ref baseline) reports a change or a failure in its
converged deploy, or a rollout host that is not "unchanged".

--keep leaves the lab hosts up (a later run reuses them: `lab up` is idempotent); without it they go down at the
end. Logs of every ansible-playbook run: build/bench/converged_run/*.log.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from _rollout import batches  # benchmarks/ is sys.path[0] when a script runs

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "tools" / "lab" / "lab"
OUT = REPO / "build" / "bench" / "converged_run"
PREFIX = "cr"
LAB_INSTANCE = "2"
# The same harmless flag value for every run: the first deploy sets it, the timed runs find it in place.
BASE_VARS = json.dumps({"sglang_server_extra_args": {"watchdog_timeout": 300}})
SLOWEST = 15


def lab_env() -> Dict[str, str]:
    """The environment of every lab call: instance 2, never the default lab or another one."""
    return dict(os.environ, GPUFLEET_LAB_INSTANCE=LAB_INSTANCE)


def checkout(ref: Optional[str]) -> Path:
    """This checkout for None, else a worktree of ref (made once per commit) that resolves gpufleet.sglang to itself."""
    if ref is None:
        return REPO
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", ref + "^{commit}"], check=True,
                            capture_output=True, text=True).stdout.strip()
    tree = OUT / ("ref-" + commit[:12])
    if not tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), commit], check=True,
                       stdout=subprocess.DEVNULL)
    link = tree / "build" / "collections" / "ansible_collections" / "gpufleet" / "sglang"
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to("../../../..")
    return tree


def write_inventory(root: Path, folder: Path, names: List[str]) -> Path:
    """hosts.yml in the a6000_pcie group, root's lab group_vars, and the lab's addresses, in one folder."""
    folder.mkdir(parents=True, exist_ok=True)
    hosts = "\n".join("        %s:" % name for name in names)
    (folder / "hosts.yml").write_text("all:\n  children:\n    a6000_pcie:\n      hosts:\n%s\n" % hosts, encoding="utf-8")
    link = folder / "group_vars"
    if link.is_symlink():
        link.unlink()
    link.symlink_to(root / "inventory" / "lab" / "group_vars")
    lab = subprocess.run([str(LAB), "inventory", *names], check=True, capture_output=True, text=True,
                         env=lab_env()).stdout
    (folder / "lab.json").write_text(lab, encoding="utf-8")
    return folder


def ansible_env(root: Path) -> Dict[str, str]:
    """root's ansible.cfg and collection tree; the timing callback of this folder on top of the usual output."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(root / "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=str(root / "build" / "collections"),
               ANSIBLE_CALLBACK_PLUGINS=str(REPO / "benchmarks" / "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="task_timing")
    env.pop("ANSIBLE_HOME", None)  # root's ansible.cfg says where its home (facts, reports) is
    env["PATH"] = str(REPO / ".venv" / "bin") + os.pathsep + env.get("PATH", "")
    return env


def playbook(root: Path, inventory: Path, label: str, play: str, *extra: str) -> Dict[str, Any]:
    """Run one playbook from root; return its wall time and the callback's task list."""
    timing = OUT / ("%s.timing.json" % label)
    if timing.exists():
        timing.unlink()
    env = dict(ansible_env(root), GPUFLEET_TASK_TIMING_FILE=str(timing))
    log = OUT / ("%s.log" % label)
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as handle:
        proc = subprocess.run(["ansible-playbook", "-f", "16", "-i", str(inventory / "hosts.yml"),
                               "-i", str(inventory / "lab.json"), str(root / play), "-e", BASE_VARS, *extra],
                              env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=str(root), check=False)
    wall = round(time.monotonic() - start, 1)
    if proc.returncode != 0:
        raise SystemExit("converged_run: %s failed (rc %d), see %s" % (label, proc.returncode, log))
    data = json.loads(timing.read_text(encoding="utf-8"))
    data["wall_s"] = wall
    return data


def summarise(data: Dict[str, Any], hosts: int, batch_count: int) -> Dict[str, Any]:
    """Wall time, per batch, per role, round trips per host, the slowest tasks and changed counts."""
    tasks = data["tasks"]
    reached = sum(1 for t in tasks for status in t["hosts"].values() if status != "skipped")
    by_role: Dict[str, float] = {}
    for task in tasks:
        key = task["role"] or "(playbook)"
        by_role[key] = round(by_role.get(key, 0.0) + task["wall_s"], 1)
    slowest = sorted(tasks, key=lambda t: -t["wall_s"])[:SLOWEST]
    per_batch: Dict[int, float] = {}
    for task in tasks:
        per_batch[task["batch"]] = round(per_batch.get(task["batch"], 0.0) + task["wall_s"], 1)
    return {
        "wall_s": data["wall_s"],
        "batches": batch_count,
        "per_batch_s": round(data["wall_s"] / batch_count, 1),
        "batch_task_time_s": [per_batch[k] for k in sorted(per_batch)],
        "tasks_started": len(tasks),
        "host_task_runs_per_host": round(reached / hosts, 1),
        "changed": sum(s.get("changed", 0) for s in data["stats"].values()),
        "failed": sum(s.get("failures", 0) + s.get("unreachable", 0) for s in data["stats"].values()),
        "time_by_role_s": dict(sorted(by_role.items(), key=lambda kv: -kv[1])),
        "slowest_tasks": [{"task": t["name"], "role": t["role"], "wall_s": t["wall_s"], "batch": t["batch"],
                           "hosts_reached": sum(1 for s in t["hosts"].values() if s != "skipped")} for t in slowest],
    }


def measure(name: str, root: Path, names: List[str], repeat: int) -> Dict[str, Any]:
    """Converge all hosts with root's code (untimed), then time a one-host deploy and the whole rollout."""
    inventory = write_inventory(root, OUT / ("inventory-" + name), names)
    playbook(root, inventory, name + "-converge", "playbooks/deploy.yml")
    rows: Dict[str, Any] = {"commit": subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                                                     capture_output=True, text=True, check=True).stdout.strip()}
    if root == REPO:
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        rows["working_tree_changes"] = bool(dirty)
    for rep in range(repeat):
        deploy = summarise(playbook(root, inventory, "%s-deploy-%d" % (name, rep), "playbooks/deploy.yml",
                                    "--limit", names[0]), 1, 1)
        report = OUT / ("%s-reports-%d" % (name, rep))
        rollout = summarise(playbook(root, inventory, "%s-rollout-%d" % (name, rep), "playbooks/rollout.yml",
                                     "-e", "rollout_report_dir=" + str(report)), len(names), len(batches(len(names))))
        summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
        rollout["unchanged_hosts"] = len(summary.get("unchanged", []))
        rollout["updated_hosts"] = len(summary.get("updated", []))
        rows.setdefault("deploy_1_host", []).append(deploy)
        rows.setdefault("rollout", []).append(rollout)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ref", help="also measure this older commit (a git worktree of it), before this checkout")
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each kind per variant")
    parser.add_argument("--keep", action="store_true", help="leave the lab hosts up at the end")
    parser.add_argument("--only-ref", action="store_true", help="measure only --ref (the baseline)")
    parser.add_argument("--after-first", action="store_true", help="measure the 'after' variant before --ref")
    parser.add_argument("--at", help="measure this commit (a worktree) as the 'after' variant instead of this checkout's "
                                     "working tree (which other work in progress may share)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    names = ["%s%d" % (PREFIX, i + 1) for i in range(args.hosts)]
    subprocess.run([str(LAB), "up", "--gpu-profile", "a6000x2-pcie-phb", "--wheelhouse", str(REPO / "build" / "wheelhouse"),
                    *names], check=True, env=lab_env())
    try:
        variants = []
        if args.ref:
            variants.append(("ref", checkout(args.ref)))
        if not args.only_ref:
            variants.insert(0 if args.after_first else len(variants), ("head", checkout(args.at) if args.at else REPO))
        result: Dict[str, Any] = {"benchmark": "converged_run", "hosts": args.hosts, "batches": batches(args.hosts),
                                  "targets": {"deploy_1_host_s": 10, "rollout_per_batch_s": 10}}
        for name, root in variants:
            result[name] = measure(name, root, names, args.repeat)
        print(json.dumps(result, indent=2))
        # The variant measured last stands or falls (--ref is the baseline, whatever it reports): a converged deploy
        # changes nothing; a rollout's only changes are its reports on the controller, every host unchanged.
        judged = variants[-1][0] if args.only_ref else "head"
        bad = [run for run in result[judged]["deploy_1_host"] if run["changed"] or run["failed"]]
        bad += [run for run in result[judged]["rollout"] if run["failed"] or run["unchanged_hosts"] != args.hosts]
        return 1 if bad else 0
    finally:
        if not args.keep:
            subprocess.run([str(LAB), "down", *names], check=False, env=lab_env())


if __name__ == "__main__":
    sys.exit(main())
