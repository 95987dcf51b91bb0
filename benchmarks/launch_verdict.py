#!/usr/bin/env python
"""How fast does sglang_launch decide? Prints JSON.

On a lab host with the SGLang stand-in: N launches that crash (CUDA OOM while allocating the KV cache) and N
that reach ready. For each crash, (verdict - crash): the module's verdict time minus the journal's timestamp of
the scheduler's fatal line. For each ready start, (ready noticed - ready): the module's first 200 from /ready
minus the journal's timestamp of "The server is fired up and ready to roll!". Goals: p95 under 1.0 s and 0.5 s.

    benchmarks/launch_verdict.py [--runs 20]        (root; needs `make wheelhouse` and the lab root filesystem)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "tools" / "lab" / "lab"
HOST = "bench-lv"


def percentile(values: List[float], pct: float) -> float:
    """Linear-interpolated percentile (numpy's default), so figures compare with the probe's."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low, high = int(rank), min(int(rank) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: List[float], goal: float) -> Dict[str, float]:
    return {"runs": len(values), "median_s": round(statistics.median(values), 3), "p95_s": round(percentile(values, 95), 3),
            "max_s": round(max(values), 3), "goal_p95_s": goal, "meets_goal": percentile(values, 95) < goal}


def journal_times(marker: str, entries: List[dict]) -> List[float]:
    return [int(e["__REALTIME_TIMESTAMP"]) / 1e6 for e in entries if marker in str(e.get("MESSAGE", ""))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_HOST_KEY_CHECKING="false")
    out = REPO / "build" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(LAB), "up", "--wheelhouse", str(REPO / "build" / "wheelhouse"), HOST], check=True)
    try:
        inventory = out / "launch_verdict.inventory.json"
        inventory.write_text(subprocess.run([str(LAB), "inventory", HOST], check=True, capture_output=True, text=True).stdout)
        subprocess.run(["ansible-playbook", "-i", str(inventory), str(REPO / "benchmarks" / "launch_verdict.yml"),
                        "-e", "bench_runs=%d" % args.runs], check=True, env=env, stdout=subprocess.DEVNULL)
        measured = json.loads((out / "launch_verdict.json").read_text())
        journal = subprocess.run([str(LAB), "exec", HOST, "journalctl", "-u", "sglang-main.service", "-o", "json", "--no-pager"],
                                 check=True, capture_output=True, text=True).stdout
        entries = [json.loads(line) for line in journal.splitlines() if line.startswith("{")]
    finally:
        subprocess.run([str(LAB), "down", HOST], check=False)

    crashes = journal_times("Scheduler hit an exception", entries)
    readies = journal_times("fired up and ready to roll", entries)
    verdict = [v - max(c for c in crashes if c <= v) for v in measured["crash"]]
    noticed = [n - min(readies, key=lambda r, n=n: abs(n - r)) for n in measured["ready"]]
    print(json.dumps({
        "benchmark": "launch_verdict",
        "what": "sglang_launch on a lab host, SGLang stand-in at time scale 0.02",
        "verdict_minus_crash": summary(verdict, 1.0),
        "ready_noticed_minus_ready": summary(noticed, 0.5),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
