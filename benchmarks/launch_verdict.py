#!/usr/bin/env python
"""How fast, and how right, does sglang_launch decide? Prints JSON.

On a lab host, through the real module under systemd and journald:

1. ``standin``: with the SGLang stand-in, N launches that crash (CUDA OOM while allocating the KV cache) and N that
   reach ready. For each crash, (verdict - crash): the module's verdict time minus the journal's timestamp of the
   scheduler's fatal line, and (verdict - exit): minus the timestamp of systemd's "Main process exited" line. For
   each ready start, (ready noticed - ready): the module's first 200 from /ready minus the journal's timestamp of
   "The server is fired up and ready to roll!".
2. ``real_logs``: every log of the verbatim corpus (tests/data/startup_corpus) printed by a replay unit
   (benchmarks/tasks/replay_startup_log.py) that then ends as that start ended: SIGKILL for a failed start, an HTTP
   server answering /ready for a successful one. For each failed start, (verdict - exit) as above; and whether the
   launch's cause is the one the scanner gives for the same text offline (the same logs give the same causes), the
   corpus label, and whether a successful start was called failed.

Goals: verdict within 0.5 s of the exit (p95), ready noticed within 0.5 s (p95).

    benchmarks/launch_verdict.py [--runs 20] [--logs all|failed|none] [--no-standin] [--limit N] [--held-out]
        (root; needs `make wheelhouse` and the lab root filesystem)

The held-out split (``test``) is left out unless ``--held-out`` is given: a replay report lists each log's verdict, and
that split is read once, when it is measured (benchmarks/diagnosis_accuracy.py --split test).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "tools" / "lab" / "lab"
CORPUS = REPO / "tests" / "data" / "startup_corpus"
HOST = "bench-lv"
SUCCESS = ("ready", "ready_runtime_error", "ready_shutdown")
EXIT_MARK = "Main process exited"


def percentile(values: List[float], pct: float) -> float:
    """Linear-interpolated percentile (numpy's default), so figures compare with the probe's."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low, high = int(rank), min(int(rank) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: List[float], goal: float) -> Dict[str, Any]:
    if not values:
        return {"runs": 0}
    return {"runs": len(values), "median_s": round(statistics.median(values), 3), "p95_s": round(percentile(values, 95), 3),
            "max_s": round(max(values), 3), "goal_p95_s": goal, "meets_goal": percentile(values, 95) < goal}


def journal_times(marker: str, entries: List[dict]) -> List[float]:
    return [int(e["__REALTIME_TIMESTAMP"]) / 1e6 for e in entries if marker in str(e.get("MESSAGE", ""))]


def since_last(times: List[float], marks: List[float]) -> List[float]:
    """For each time, how long after the latest mark at or before it (marks after every time are left out)."""
    out = []
    for moment in times:
        before = [mark for mark in marks if mark <= moment]
        if before:
            out.append(moment - max(before))
    return out


def journal(unit: str) -> List[dict]:
    text = subprocess.run([str(LAB), "exec", HOST, "journalctl", "--all", "-u", unit, "-o", "json", "--no-pager"],
                          check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def offline_verdicts(rows: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The scanner's verdict on each log's text, as the corpus benchmark reads it (the same code the module runs)."""
    tree = Path(tempfile.mkdtemp(prefix="launch-verdict-bench-"))
    (tree / "ansible_collections" / "gpufleet").mkdir(parents=True)
    (tree / "ansible_collections" / "gpufleet" / "sglang").symlink_to(REPO)
    sys.path.insert(0, str(tree))
    from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log  # pylint: disable=import-outside-toplevel
    verdicts = {}
    for row in rows:
        text = (CORPUS / row["file"]).read_bytes().decode("utf-8", "replace")
        verdicts[row["file"]] = scan_startup_log(text, ended=row["outcome"] not in SUCCESS)
    return verdicts


def real_logs_report(rows: List[Dict[str, Any]], replayed: List[Dict[str, Any]], exits: List[float]) -> Dict[str, Any]:
    """Latency and agreement of the replays, per split."""
    by_file = {row["file"]: row for row in rows}
    offline = offline_verdicts(rows)
    report: Dict[str, Any] = {}
    for split in sorted({row["split"] for row in rows}):
        runs = [run for run in replayed if by_file[run["file"]]["split"] == split]
        failed = [run for run in runs if by_file[run["file"]]["outcome"] not in SUCCESS]
        succeeded = [run for run in runs if by_file[run["file"]]["outcome"] in SUCCESS]
        verdicts = [run["verdict_at"] for run in failed if run["verdict_at"] is not None]
        disagree = [{"file": run["file"], "launch": run["cause"], "offline": offline[run["file"]]["cause"],
                     "launch_error_message": run["error_message"][:160]}
                    for run in failed if run["cause"] != offline[run["file"]]["cause"]]
        wrong = [{"file": run["file"], "label": by_file[run["file"]]["cause"], "launch": run["cause"]}
                 for run in failed if run["cause"] != by_file[run["file"]]["cause"]]
        called_failed = [run["file"] for run in succeeded if run["outcome"] == "failed"]
        report[split] = {
            "failed_starts": len(failed),
            "detected": sum(1 for run in failed if run["outcome"] == "failed"),
            "same_cause_as_offline": len(failed) - len(disagree),
            "cause_right": len(failed) - len(wrong),
            "successes": len(succeeded),
            "successes_reached_ready": sum(1 for run in succeeded if run["outcome"] == "ready"),
            "successes_called_failed": called_failed,
            "verdict_minus_exit": summary(since_last(verdicts, exits), 0.5),
            "disagreements_with_offline": disagree,
            "slowest": sorted(({"file": run["file"], "verdict_minus_exit_s": round(delay, 3),
                                "verdict_minus_seen_s": round(run["verdict_at"] - (run.get("exit_seen_at") or run["verdict_at"]), 3),
                                "reason": run.get("reason")}
                               for run, delay in zip(failed, since_last([run["verdict_at"] or 0.0 for run in failed], exits))),
                              key=lambda item: -item["verdict_minus_exit_s"])[:5],
            "misses": wrong,
        }
    return report


def main() -> int:  # pylint: disable=too-many-locals
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--logs", choices=("all", "failed", "none"), default="all",
                        help="which corpus logs to replay (constructed ones never: they are not a process's output)")
    parser.add_argument("--no-standin", action="store_true", help="skip the stand-in's crash and ready runs")
    parser.add_argument("--limit", type=int, default=0, help="replay only every k-th log, about this many (0: all)")
    parser.add_argument("--held-out", action="store_true",
                        help="replay the held-out split (test) too: its report shows its misses, so only when it is measured")
    args = parser.parse_args()
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_HOST_KEY_CHECKING="false")
    out = REPO / "build" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    corpus = [row for row in json.loads((CORPUS / "corpus.json").read_text(encoding="utf-8"))
              if row["split"] != "constructed" and (args.held_out or row["split"] != "test")]
    if args.logs == "failed":
        corpus = [row for row in corpus if row["outcome"] not in SUCCESS]
    elif args.logs == "none":
        corpus = []
    if args.limit and len(corpus) > args.limit:
        corpus = corpus[::-(-len(corpus) // args.limit)]
    logs_file = out / "launch_verdict_logs.json"
    logs_file.write_text(json.dumps({"bench_logs": [{"file": row["file"], "replay": "ready" if row["outcome"] in SUCCESS else "failed"}
                                                    for row in corpus]}))
    for stale in ("launch_verdict.json", "launch_verdict_replay.json"):
        (out / stale).unlink(missing_ok=True)
    subprocess.run([str(LAB), "up", "--wheelhouse", str(REPO / "build" / "wheelhouse"), HOST], check=True)
    try:
        inventory = out / "launch_verdict.inventory.json"
        inventory.write_text(subprocess.run([str(LAB), "inventory", HOST], check=True, capture_output=True, text=True).stdout)
        subprocess.run(["ansible-playbook", "-i", str(inventory), str(REPO / "benchmarks" / "launch_verdict.yml"),
                        "-e", "bench_runs=%d" % args.runs, "-e", "bench_standin=%s" % (not args.no_standin),
                        "-e", "@%s" % logs_file], check=True, env=env, stdout=subprocess.DEVNULL)
        standin_entries = [] if args.no_standin else journal("sglang-main.service")
        replay_entries = journal("sglang-replay.service") if corpus else []
    finally:
        subprocess.run([str(LAB), "down", HOST], check=False)

    result: Dict[str, Any] = {"benchmark": "launch_verdict",
                              "what": "sglang_launch on a lab host under systemd and journald: the SGLang stand-in at time scale "
                                      "0.02, and the real logs of tests/data/startup_corpus replayed by a unit"}
    if not args.no_standin:
        measured = json.loads((out / "launch_verdict.json").read_text())
        crashes = journal_times("Scheduler hit an exception", standin_entries)
        readies = journal_times("fired up and ready to roll", standin_entries)
        noticed = [n - min(readies, key=lambda r, n=n: abs(n - r)) for n in measured["ready"]]
        result["verdict_minus_crash"] = summary(since_last(measured["crash"], crashes), 1.0)
        result["verdict_minus_exit"] = summary(since_last(measured["crash"], journal_times(EXIT_MARK, standin_entries)), 0.5)
        result["ready_noticed_minus_ready"] = summary(noticed, 0.5)
    if corpus:
        replayed = json.loads((out / "launch_verdict_replay.json").read_text())
        exits = journal_times(EXIT_MARK, replay_entries)
        failed_verdicts = [run["verdict_at"] for run in replayed if run["verdict_at"] is not None]
        result["real_logs"] = {"replayed": len(replayed), "verdict_minus_exit": summary(since_last(failed_verdicts, exits), 0.5),
                               "splits": real_logs_report(corpus, replayed, exits)}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
