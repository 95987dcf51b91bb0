#!/usr/bin/env python
"""How well does the startup scanner diagnose real SGLang logs? Prints JSON.

Reads the verbatim corpus in ``tests/data/startup_corpus`` (``corpus.json``: file, split, cause, outcome) and
scans every log with the scanner the launch module runs (``plugins/module_utils/startup/scanner.py``):

* a failed start is scanned as the launch sees it once the process exit is known (``close(exited=True)``):
  detected when the verdict is ``failed``, right when its cause is the corpus label;
* a successful start (``ready``, ``ready_runtime_error``, ``ready_shutdown``) is scanned without an exit (the
  server went on serving, or its end came after ready); it is "called failed" when the verdict is ``failed``.

Per split (``dev``: the patterns were written on it; ``opened`` to ``opened28``: the test splits in the order they
were collected, each measured once as ``test`` before any pattern was written for it, then opened for development
(each one's measurement is in docs/startup-failure-causes.md); ``test``: the next held-out split (681 and later),
collected after the scanner, never tuned on (empty until its rows are added);
``constructed``: logs built from SGLang's and systemd's strings for labels without a public log) and per cause:
detection, cause accuracy, successes called failed, and the list of misses (file, label, verdict, cause, error
message). ``scan_pace`` is the scanner's own speed on the chosen splits' logs, fed line by line (lines per second).

    benchmarks/diagnosis_accuracy.py [--split SPLIT] [--corpus DIR]

SPLIT: dev, opened, opened2 to opened28, test, constructed, or all (the default).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "startup_corpus"
SUCCESS_OUTCOMES = ("ready", "ready_runtime_error", "ready_shutdown")
SPLITS = ("dev", "opened", "opened2", "opened3", "opened4", "opened5", "opened6", "opened7", "opened8", "opened9", "opened10",
          "opened11", "opened12", "opened13", "opened14", "opened15", "opened16", "opened17", "opened18", "opened19", "opened20", "opened21",
          "opened22", "opened23", "opened24", "opened25", "opened26", "opened27", "opened28",
          "test", "constructed")


def import_collection() -> None:
    """Make ``ansible_collections.gpufleet.sglang`` importable from this checkout (a throwaway symlink tree)."""
    tree = Path(tempfile.mkdtemp(prefix="diagnosis-bench-"))
    (tree / "ansible_collections" / "gpufleet").mkdir(parents=True)
    (tree / "ansible_collections" / "gpufleet" / "sglang").symlink_to(ROOT)
    sys.path.insert(0, str(tree))


def rate(part: int, whole: int) -> Any:
    """A share rounded for reading, or None when there is nothing to share."""
    return round(part / whole, 3) if whole else None


def scan(path: Path, ended: bool) -> Dict[str, Any]:
    """The scanner's verdict on one log file, read as bytes the way a pipe delivers them."""
    from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import scan_startup_log  # pylint: disable=import-outside-toplevel
    return scan_startup_log(path.read_bytes().decode("utf-8", "replace"), ended=ended)


def measure(rows: List[Dict[str, Any]], corpus: Path) -> Dict[str, Any]:
    """Figures for one split: detection and cause accuracy of failed starts, successes called failed, misses."""
    per_cause: Dict[str, Dict[str, int]] = {}
    misses: List[Dict[str, Any]] = []
    called_failed: List[Dict[str, Any]] = []
    failed = detected = right = successes = 0
    for row in rows:
        is_success = row["outcome"] in SUCCESS_OUTCOMES
        result = scan(corpus / row["file"], ended=not is_success)
        if is_success:
            successes += 1
            if result["outcome"] == "failed":
                called_failed.append({"file": row["file"], "label": row["cause"], "cause": result["cause"],
                                      "fatal_line": result["fatal_line"]})
            continue
        failed += 1
        counts = per_cause.setdefault(row["cause"], {"logs": 0, "detected": 0, "right": 0})
        counts["logs"] += 1
        if result["outcome"] == "failed":
            detected += 1
            counts["detected"] += 1
        if result["outcome"] == "failed" and result["cause"] == row["cause"]:
            right += 1
            counts["right"] += 1
        else:
            misses.append({"file": row["file"], "label": row["cause"], "outcome": result["outcome"], "cause": result["cause"],
                           "error_message": (result["error_message"] or "")[:200]})
    return {
        "logs": len(rows),
        "failed_starts": failed,
        "detected": detected,
        "detection": rate(detected, failed),
        "cause_right": right,
        "cause_accuracy": rate(right, failed),
        "successes": successes,
        "successes_called_failed": len(called_failed),
        "per_cause": {cause: dict(counts, detection=rate(counts["detected"], counts["logs"]),
                                  cause_accuracy=rate(counts["right"], counts["logs"]))
                      for cause, counts in sorted(per_cause.items())},
        "misses": misses,
        "called_failed": called_failed,
    }


def pace(rows: List[Dict[str, Any]], corpus: Path, repeat: int = 3) -> Dict[str, Any]:
    """Lines per second of the scanner over every log of the corpus, fed one line at a time (best of ``repeat``)."""
    from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.scanner import StartupLogScanner  # pylint: disable=import-outside-toplevel
    texts = [(corpus / row["file"]).read_bytes().decode("utf-8", "replace").splitlines() for row in rows]
    lines = sum(len(text) for text in texts)
    best = None
    for _round in range(repeat):
        started = time.perf_counter()
        for text in texts:
            scanner = StartupLogScanner()
            for line in text:
                scanner.feed(line)
            scanner.close(exited=True)
            scanner.result()
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return {"lines": lines, "seconds": round(best or 0.0, 3), "lines_per_s": int(lines / best) if best else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--split", choices=SPLITS + ("all",), default="all")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    import_collection()
    rows = json.loads((args.corpus / "corpus.json").read_text(encoding="utf-8"))
    splits = SPLITS if args.split == "all" else (args.split,)
    print(json.dumps({
        "benchmark": "diagnosis_accuracy",
        "what": "startup scanner on the verbatim corpus of real SGLang startup logs (tests/data/startup_corpus)",
        "splits": {split: measure([row for row in rows if row["split"] == split], args.corpus) for split in splits},
        # only the chosen splits' logs: a run on a development split never reads a held-out file
        "scan_pace": pace([row for row in rows if row["split"] in splits], args.corpus),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
