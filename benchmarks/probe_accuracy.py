#!/usr/bin/env python
"""Accuracy of the probe against the SGLang stand-in's known pace, and the ceiling of the story's box.

Starts the stand-in from this checkout (``python -m sglang.launch_server`` with ``PYTHONPATH=tools/standins/sglang/src``)
and runs the probe's own code (``probe_runner.Probe``, what the module runs) against it. Prints one JSON object.

1. ``pace``: profile ``test-fast`` at true pace (400 tok/s per request, TTFT = 5 ms + uncached prompt tokens /
   200,000 tok/s, no batch slowdown). Per-request decode tokens/s at concurrency 1 and 4 against 400
   (acceptance: within 2%), and every request's TTFT at concurrency 1 against 5 ms + its prompt tokens / 200,000
   (acceptance: within 5 ms + 2%). At concurrency > 1 the stand-in batches prefills, so TTFT is judged at 1.
2. ``story``: the default profile (2x RTX A6000, 27B dense bf16, TP 2: 28 tok/s; NEXTN 3/1/4: accept rate 0.58 per
   draft, 1.09x step cost), run 10x faster (``SGLANG_STANDIN_PACE_SCALE=0.1``) and scaled back: decode tokens/s
   without and with speculation, the run's accept length against its expectation, and the efficiency and verdict
   against the computed ceiling.
3. ``ceiling``: the story box's batch-1 decode ceiling without speculation, from a Qwen3.5-27B-shaped config.json
   and from a bare 27B parameter count (acceptance: between 26 and 30 tok/s).

    benchmarks/probe_accuracy.py [--python PYTHON] [--requests 8] [--tokens 256]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STANDIN_SRC = ROOT / "tools" / "standins" / "sglang" / "src"

STORY_CONFIG = {  # the shape of Qwen3.5-27B's public config.json (64 layers, 3 of every 4 gated-DeltaNet, untied)
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "tie_word_embeddings": False,
    "text_config": {"model_type": "qwen3_5_text", "dtype": "bfloat16", "hidden_size": 5120, "intermediate_size": 17408,
                    "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
                    "attn_output_gate": True, "vocab_size": 248320, "full_attention_interval": 4, "linear_num_key_heads": 16,
                    "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                    "linear_conv_kernel_dim": 4, "mtp_num_hidden_layers": 1},
}
STORY_BOX = {"gpu": "NVIDIA RTX A6000", "tp": 2, "link": "PHB", "pcie_gen": 4, "pcie_width": 16}


def import_collection():
    """Make ``ansible_collections.gpufleet.sglang`` importable from this checkout (a throwaway symlink tree)."""
    tree = Path(tempfile.mkdtemp(prefix="probe-bench-"))
    (tree / "ansible_collections" / "gpufleet").mkdir(parents=True)
    (tree / "ansible_collections" / "gpufleet" / "sglang").symlink_to(ROOT)
    sys.path.insert(0, str(tree))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StandIn:
    """The stand-in server as a child process, ready when ``/ready`` answers 200."""

    def __init__(self, python: str, profile: str, pace_scale: float, args, workdir: Path):
        self.port = free_port()
        model = workdir / ("model-%s" % profile)
        model.mkdir(exist_ok=True)
        env = dict(os.environ, PYTHONPATH=str(STANDIN_SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   SGLANG_STANDIN_PROFILE=profile, SGLANG_STANDIN_TIME_SCALE="0.01", SGLANG_STANDIN_PACE_SCALE=str(pace_scale),
                   SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION="0")
        self.log = open(workdir / ("standin-%d.log" % self.port), "w", encoding="utf-8")  # pylint: disable=consider-using-with
        self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
            [python, "-m", "sglang.launch_server", "--model-path", str(model), "--port", str(self.port)] + list(args),
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = "http://127.0.0.1:%d" % self.port

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("the stand-in exited with %s; see %s" % (self.proc.returncode, self.log.name))
            try:
                with urllib.request.urlopen(self.url + "/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise SystemExit("the stand-in was not ready within %ss" % timeout)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def run_probe(url: str, **params):
    from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.runner import Probe  # pylint: disable=import-outside-toplevel
    merged = {"base_url": url, "include_requests": True}
    merged.update(params)
    return Probe(merged).run()


def pct(measured: float, expected: float) -> float:
    return round((measured - expected) / expected * 100.0, 3)


def pace_case(python: str, workdir: Path, requests: int, tokens: int):
    """test-fast at true pace: decode 400 tok/s, TTFT = 5 ms + prompt / 200,000 tok/s."""
    decode, overhead, prefill = 400.0, 0.005, 200000.0
    server = StandIn(python, "test-fast", 1.0, [], workdir)
    try:
        server.wait_ready()
        results = run_probe(server.url, concurrency=[1, 4], requests_per_level=requests, output_tokens=tokens)
    finally:
        server.stop()
    levels = []
    passed = True
    for level in results["levels"]:
        rows = [r for r in level["request_details"] if r["ok"]]
        errors = [pct(r["decode_tps"], decode) for r in rows]
        entry = {"concurrency": level["concurrency"], "requests": level["requests"], "failed": level["failed"],
                 "expected_decode_tps": decode, "measured_decode_tps_mean": level["decode_tps"]["mean"],
                 "decode_error_pct_mean": pct(level["decode_tps"]["mean"], decode),
                 "decode_error_pct_worst": max(errors, key=abs) if errors else None}
        passed &= level["failed"] == 0 and abs(entry["decode_error_pct_mean"]) <= 2.0
        if level["concurrency"] == 1:
            ttft = []
            for r in rows:
                expected_ms = (overhead + r["prompt_tokens"] / prefill) * 1e3
                err = r["ttft_ms"] - expected_ms
                ttft.append({"prompt_tokens": r["prompt_tokens"], "expected_ms": round(expected_ms, 3), "measured_ms": r["ttft_ms"],
                             "error_ms": round(err, 3), "error_pct": round(err / expected_ms * 100.0, 2),
                             "within_5ms_plus_2pct": abs(err) <= 5.0 + 0.02 * expected_ms})
            entry["ttft"] = ttft
            entry["ttft_error_ms_mean"] = round(sum(t["error_ms"] for t in ttft) / len(ttft), 3)
            entry["ttft_error_ms_worst"] = max((t["error_ms"] for t in ttft), key=abs)
            entry["ttft_error_pct_worst"] = max((t["error_pct"] for t in ttft), key=abs)
            entry["ttft_all_within_5ms_plus_2pct"] = all(t["within_5ms_plus_2pct"] for t in ttft)
            passed &= entry["ttft_all_within_5ms_plus_2pct"]
        levels.append(entry)
    return {"profile": "test-fast", "endpoint": results["endpoint"], "output_tokens": tokens, "levels": levels, "pass": passed}


def story_case(python: str, workdir: Path, tokens: int):
    """The story's box at 10x speed, scaled back: plain decode, then NEXTN 3/1/4 with /metrics."""
    scale = 0.1
    rate = 0.58
    expected_accept = 1 + rate + rate ** 2 + rate ** 3
    cases = {"no_speculation": ([], 1.0, 1.0),
             "nextn_3_1_4": (["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                              "--speculative-num-draft-tokens", "4", "--enable-metrics"], expected_accept, 1.0 + 0.03 * 3)}
    out = {"profile": "a6000x2-27b-nextn", "pace_scale": scale, "note": "figures scaled back to the profile's real pace"}
    for name, (flags, accept, step_cost) in cases.items():
        server = StandIn(python, "a6000x2-27b-nextn", scale, ["--tp", "2"] + flags, workdir)
        try:
            server.wait_ready()
            results = run_probe(server.url, concurrency=[1], requests_per_level=4, output_tokens=tokens,
                                ceiling={"model_config": STORY_CONFIG, **STORY_BOX})
        finally:
            server.stop()
        level = results["levels"][0]
        expected = 28.0 * accept / step_cost
        measured = level["decode_tps"]["mean"] * scale
        ceiling = results["ceiling"] or {}
        efficiency = measured / ceiling["tokens_per_s"] if ceiling.get("tokens_per_s") else None
        from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import efficiency_verdict  # pylint: disable=import-outside-toplevel
        out[name] = {
            "expected_decode_tps": round(expected, 2), "measured_decode_tps": round(measured, 2), "decode_error_pct": pct(measured, expected),
            "expected_accept_length": round(accept, 4) if flags else None, "measured_accept_length": results["accept_length"],
            "accept_length_source": results["accept_length_source"],
            "ceiling_tokens_per_s": ceiling.get("tokens_per_s"), "efficiency": round(efficiency, 4) if efficiency else None,
            "verdict": efficiency_verdict(measured, ceiling)["verdict"] if ceiling else results.get("ceiling_error"),
        }
    return out


def ceiling_case():
    from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import decode_ceiling  # pylint: disable=import-outside-toplevel
    from_config = decode_ceiling(STORY_CONFIG, **STORY_BOX)
    from_count = decode_ceiling(27, dtype="bf16", num_layers=64, hidden_size=5120, **STORY_BOX)
    spec = decode_ceiling(STORY_CONFIG, accept_length=2.0, **STORY_BOX)

    def brief(c):
        return {"tokens_per_s": c["tokens_per_s"], "per_step_ms": c["per_step_ms"], "bound": c["bound"],
                "weight_gb_per_step": round(c["inputs"]["weight_bytes_per_step"] / 1e9, 2),
                "allreduces_per_step": c["inputs"]["allreduces_per_step"], "allreduce_latency_us": c["inputs"]["allreduce_latency_us"]}
    return {"box": "27B dense bf16, 2x RTX A6000 (768 GB/s), PCIe Gen4 x16 via host bridge (PHB), TP 2",
            "from_config_json": brief(from_config), "from_27b_param_count": brief(from_count),
            "with_accept_length_2": spec["tokens_per_s"],
            "pass": all(26.0 <= c["tokens_per_s"] <= 30.0 for c in (from_config, from_count))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the stand-in")
    parser.add_argument("--requests", type=int, default=8, help="requests per level in the pace case")
    parser.add_argument("--tokens", type=int, default=256, help="output tokens per request")
    args = parser.parse_args()
    if not (STANDIN_SRC / "sglang" / "_standin").is_dir():
        raise SystemExit("tools/standins/sglang/src is missing: this benchmark measures against the stand-in")
    import_collection()
    workdir = Path(tempfile.mkdtemp(prefix="probe-accuracy-"))
    started = time.time()
    pace = pace_case(args.python, workdir, args.requests, args.tokens)
    story = story_case(args.python, workdir, args.tokens)
    ceiling = ceiling_case()
    report = {"benchmark": "probe_accuracy", "pace": pace, "story": story, "ceiling": ceiling,
              "pass": pace["pass"] and ceiling["pass"], "wall_s": round(time.time() - started, 1)}
    print(json.dumps(report, indent=2))
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
