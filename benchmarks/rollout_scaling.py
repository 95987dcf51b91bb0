#!/usr/bin/env python
"""How long does rollout.yml take for 2, 4 and 8 hosts, with a change and without one? Prints JSON.

Boots 8 lab hosts of the story's kind (inventory/lab's a6000_pcie group_vars: the SGLang stand-in at time scale
0.05, a batch-1 probe gate) and deploys them once (not timed). Then for N in 2, 4, 8, on the first N hosts
(--limit) with rollout.yml's default batches (a canary, then 25% of N per batch):

- with a change: a new value of a harmless flag (watchdog_timeout), so every host restarts, reaches ready,
  settles and passes its probe against its own previous figures;
- without a change: the same command again, so nothing restarts and nothing is probed.

Each figure is the wall time of one ansible-playbook run (forks 16). Batches run one after another, so time grows
with the number of batches, not with hosts; within a batch hosts run in parallel (on this 2-core machine the
hosts' CPU is shared, so a wide batch is slower than it would be on real machines).

    benchmarks/rollout_scaling.py [--sizes 2 4 8]     (root; needs `make wheelhouse lab-rootfs`)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

from _rollout import batches  # benchmarks/ is sys.path[0] when a script runs

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "tools" / "lab" / "lab"
PREFIX = "rs"


def write_inventory(out: Path, names: List[str]) -> Path:
    """hosts.yml in the a6000_pcie group, the lab's group_vars, and the lab's addresses, in one folder."""
    folder = out / "inventory"
    folder.mkdir(parents=True, exist_ok=True)
    hosts = "\n".join("        %s:" % name for name in names)
    (folder / "hosts.yml").write_text("all:\n  children:\n    a6000_pcie:\n      hosts:\n%s\n" % hosts, encoding="utf-8")
    link = folder / "group_vars"
    if not link.exists():
        link.symlink_to(REPO / "inventory" / "lab" / "group_vars")
    lab = subprocess.run([str(LAB), "inventory", *names], check=True, capture_output=True, text=True).stdout
    (folder / "lab.json").write_text(lab, encoding="utf-8")
    return folder


def playbook(env: Dict[str, str], inventory: Path, play: str, *extra: str) -> float:
    """Run one playbook, return its wall time; its output goes to build/bench/rollout_scaling.log."""
    log = REPO / "build" / "bench" / "rollout_scaling.log"
    start = time.monotonic()
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("\n=== %s %s\n" % (play, " ".join(extra)))
        handle.flush()
        subprocess.run(["ansible-playbook", "-f", "16", "-i", str(inventory / "hosts.yml"), "-i", str(inventory / "lab.json"),
                        str(REPO / play), *extra], check=True, env=env, stdout=handle, stderr=subprocess.STDOUT)
    return round(time.monotonic() - start, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8])
    args = parser.parse_args()
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
    out = REPO / "build" / "bench" / "rollout_scaling"
    out.mkdir(parents=True, exist_ok=True)
    (REPO / "build" / "bench" / "rollout_scaling.log").write_text("", encoding="utf-8")
    names = ["%s%d" % (PREFIX, i + 1) for i in range(max(args.sizes))]
    subprocess.run([str(LAB), "up", "--gpu-profile", "a6000x2-pcie-phb", "--wheelhouse", str(REPO / "build" / "wheelhouse"), *names], check=True)
    try:
        inventory = write_inventory(out, names)
        base = json.dumps({"sglang_server_extra_args": {"watchdog_timeout": 300}})
        deploy_s = playbook(env, inventory, "deploy.yml", "-e", base)
        rows = []
        for size in args.sizes:
            limit = ",".join(names[:size])
            change = json.dumps({"sglang_server_extra_args": {"watchdog_timeout": 300 + size}})
            report = str(out / ("reports-%d" % size))
            with_change = playbook(env, inventory, "playbooks/rollout.yml", "--limit", limit, "-e", change, "-e", "rollout_report_dir=" + report)
            summary = json.loads((Path(report) / "summary.json").read_text())
            without = playbook(env, inventory, "playbooks/rollout.yml", "--limit", limit, "-e", change, "-e", "rollout_report_dir=" + report + "-again")
            again = json.loads((Path(report + "-again") / "summary.json").read_text())
            rows.append({"hosts": size, "batches": batches(size), "with_change_s": with_change, "without_change_s": without,
                         "with_change_per_batch_s": round(with_change / len(batches(size)), 1),
                         "without_change_per_batch_s": round(without / len(batches(size)), 1),
                         "updated": len(summary["updated"]), "unchanged_on_rerun": len(again["unchanged"])})
        print(json.dumps({"benchmark": "rollout_scaling", "deploy_8_hosts_s": deploy_s, "rollout_defaults": "canary 1, then 25% per batch",
                          "results": rows}, indent=2))
        bad = [r for r in rows if r["updated"] != r["hosts"] or r["unchanged_on_rerun"] != r["hosts"]]
        return 1 if bad else 0
    finally:
        subprocess.run([str(LAB), "down", *names], check=False)


if __name__ == "__main__":
    sys.exit(main())
