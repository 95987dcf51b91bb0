#!/usr/bin/env python
"""Does a rolling restart behind the gateway drop a request? Steady streamed load through smg while rollout.yml
restarts 4 lab servers; prints JSON: requests sent, failed and cut, and TTFT p50/p99 before and during the rollout.

Boots a gateway host and 4 lab servers (the small-model group of the Molecule scenario `gateway`,
molecule/gateway/group_vars: the stand-in at time scale 0.05, one L40S each) in lab instance GPUFLEET_LAB_INSTANCE
(default 4), deploys them (deploy.yml: the gateway, the servers, each registered once ready; not timed), then runs
tools/dev/stream_load.py against the gateway for --before seconds, then through
`rollout.yml -e rollout_restart=true` (canary, then batches of 25%: every server drained out of the pool,
restarted, gated, joined again), then --after seconds more. Figures come from the client's own per-request record:
a request counts in the window in which it was sent.

    benchmarks/rollout_under_load.py [--streams 4] [--tokens 48] [--before 20] [--keep]   (root; needs
    `make wheelhouse lab-rootfs`; --wheelhouse DIR to boot the hosts with another wheelhouse)

Goal: 0 failed, 0 cut. The hosts are brought down at the end unless --keep.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "tools" / "lab" / "lab"
GATEWAY = "rulgw"
SERVERS = ["rul1", "rul2", "rul3", "rul4"]
KEY_FILE = REPO / "molecule" / "gateway" / "group_vars" / "sglang_gateway.yml"


def lab(env: Dict[str, str], *args: str) -> str:
    """Run the lab tool; its stdout."""
    return subprocess.run([str(LAB), *args], env=env, check=True, capture_output=True, text=True).stdout


def write_inventory(folder: Path, lab_json: Dict[str, Any]) -> Path:
    """The gateway in sglang_gateway, the servers in gateway_servers, the scenario's group_vars, the lab's addresses."""
    folder.mkdir(parents=True, exist_ok=True)
    hosts = lab_json["all"]["hosts"]
    inventory = {"all": {"vars": lab_json["all"]["vars"], "children": {
        "sglang_gateway": {"hosts": {GATEWAY: hosts[GATEWAY]}},
        "gateway_servers": {"hosts": {name: hosts[name] for name in SERVERS}}}}}
    (folder / "hosts.json").write_text(json.dumps(inventory, indent=1), encoding="utf-8")
    link = folder / "group_vars"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(REPO / "molecule" / "gateway" / "group_vars")
    return folder


def percentile(values: List[float], share: float) -> Optional[float]:
    """Nearest-rank percentile in ms, None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, int(round(share * len(ordered) + 0.5)) - 1))] * 1000, 1)


def window(requests: List[List[Any]], start: float, end: float) -> Dict[str, Any]:
    """Counts and TTFT of the requests sent in [start, end)."""
    chosen = [r for r in requests if start <= r[0] < end]
    ttfts = [r[1] for r in chosen if r[1] is not None and r[2] == "ok"]
    return {"sent": len(chosen), "failed": sum(1 for r in chosen if r[2] == "failed"),
            "cut": sum(1 for r in chosen if r[2] == "cut"), "ttft_p50_ms": percentile(ttfts, 0.50),
            "ttft_p99_ms": percentile(ttfts, 0.99), "seconds": round(end - start, 1)}


def main() -> int:
    """Boot, deploy, load, roll, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--before", type=float, default=20.0)
    parser.add_argument("--after", type=float, default=5.0)
    parser.add_argument("--wheelhouse", default=str(REPO / "build" / "wheelhouse"))
    parser.add_argument("--keep", action="store_true", help="leave the lab hosts up")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("GPUFLEET_LAB_INSTANCE", "4")
    out = REPO / "build" / "bench" / "rollout_under_load"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    lab(env, "up", "--gpu-profile", "none", "--wheelhouse", args.wheelhouse, GATEWAY)
    for name in SERVERS:
        lab(env, "up", "--gpu-profile", "l40sx4-pcie-sys", "--wheelhouse", args.wheelhouse, name)
    try:
        inventory = write_inventory(out / "inventory", json.loads(lab(env, "inventory", GATEWAY, *SERVERS)))
        play_env = dict(env, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
        with open(out / "deploy.log", "w", encoding="utf-8") as log:
            subprocess.run(["ansible-playbook", "-i", str(inventory), str(REPO / "playbooks" / "deploy.yml")],
                           env=play_env, check=True, stdout=log, stderr=subprocess.STDOUT)
        gateway_host = json.loads((inventory / "hosts.json").read_text())["all"]["children"]["sglang_gateway"]["hosts"][GATEWAY]
        key = [line.split(":", 1)[1].strip() for line in KEY_FILE.read_text().splitlines()
               if line.startswith("sglang_gateway_api_key:")][0]
        load_out, stop = out / "load.json", out / "stop"
        client = subprocess.Popen([sys.executable, str(REPO / "tools" / "dev" / "stream_load.py"),
                                   "--url", "http://%s:30080" % gateway_host["ansible_host"], "--model", "Qwen/Qwen3-0.6B",
                                   "--streams", str(args.streams), "--tokens", str(args.tokens), "--stop-file", str(stop),
                                   "--duration", "3600", "--out", str(load_out)],
                                  env=dict(env, STREAM_LOAD_API_KEY=key))
        time.sleep(args.before)
        roll_start = time.time()
        with open(out / "rollout.log", "w", encoding="utf-8") as log:
            rollout = subprocess.run(["ansible-playbook", "-i", str(inventory), str(REPO / "playbooks" / "rollout.yml"),
                                      "-e", "rollout_restart=true", "-e", "rollout_report_dir=%s" % (out / "reports")],
                                     env=play_env, check=False, stdout=log, stderr=subprocess.STDOUT)
        roll_end = time.time()
        time.sleep(args.after)
        stop.touch()
        try:
            client.wait(120)
        except subprocess.TimeoutExpired:
            client.send_signal(signal.SIGTERM)
            client.wait(30)
        load = json.loads(load_out.read_text(encoding="utf-8"))
        result = {
            "command": "benchmarks/rollout_under_load.py --streams %d --tokens %d --before %g" % (args.streams, args.tokens, args.before),
            "lab_instance": env["GPUFLEET_LAB_INSTANCE"], "servers": len(SERVERS), "rollout_rc": rollout.returncode,
            "rollout_s": round(roll_end - roll_start, 1),
            "total": {"sent": load["sent"], "failed": load["failed"], "cut": load["cut"]},
            "before": window(load["requests"], load["started"], roll_start),
            "during": window(load["requests"], roll_start, roll_end),
            "after": window(load["requests"], roll_end, load["ended"] + 1),
            "errors": load["errors"][:5],
        }
        print(json.dumps(result, indent=1))
        return 0 if rollout.returncode == 0 and load["failed"] == 0 and load["cut"] == 0 else 1
    finally:
        if not args.keep:
            for name in [GATEWAY, *SERVERS]:
                subprocess.run([str(LAB), "down", name], env=env, check=False, capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
