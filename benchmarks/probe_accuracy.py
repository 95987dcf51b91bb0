#!/usr/bin/env python
"""Accuracy of the probe against the SGLang stand-in's known pace, against SGLang's own bench on the same server,
and the story box's bound and expectation.

Starts the stand-in from this checkout (``python -m sglang.launch_server`` with ``PYTHONPATH=tools/standins/sglang/src``)
and runs the probe's own code (``probe_runner.Probe``, what the module runs) against it. Prints one JSON object.

1. ``pace``: profile ``test-fast`` at true pace (its decode is the collection's expectation for its box, 395.6 tok/s
   per request; TTFT = 5 ms + uncached prompt tokens / 200,000 tok/s; no batch slowdown). Per-request decode tokens/s
   at concurrency 1 and 4 against the stand-in's pace (acceptance: within 2%), and every request's TTFT at
   concurrency 1 against 5 ms + its prompt tokens / 200,000 (acceptance: within 5 ms + 2%).
2. ``story``: the default profile (2x RTX A6000, 27B dense bf16, TP 2; NEXTN 3/1/4 at 0.78 per draft), run 10x faster
   (``SGLANG_STANDIN_PACE_SCALE=0.1``) and scaled back: decode tokens/s without and with speculation against the
   expectation, the run's accept length, and the verdict against the expected figure and the bound.
3. ``bench``: the real ``python -m sglang.benchmark.serving`` (the CPU venv of ``tools/dev/sglang-cpu-venv``, or
   ``--bench-python``) and the probe against the same stand-in on loopback, at concurrency 1, 4, 16 and 64, the
   same requests (the bench's ``custom`` dataset and the probe's ``prompts``: equal lengths, the first one also
   the warmup, the prefix cache flushed before every run), chat endpoint (``sglang-oai-chat`` with
   ``stream_options.include_usage``). Acceptance, in the matching mode (the probe's ``per-request`` connections,
   the bench's own way): mean and median TTFT within 5 ms + 2% of the bench's, mean TPOT (decode) within 2%. Each
   level sends at least 32 requests: a closed loop of equal requests lands each one at a different phase of the
   server's batch steps (TTFT spreads over 60-170 ms at concurrency 4), and the median of 8 or 16 such requests
   moves by tens of ms from run to run whichever client sends them. The probe's ``keep-alive`` mode is measured
   too, with its connect time, to show what the bench's connects add.
4. ``ceiling``: the story box's bound (26-30 tok/s) and expectation without speculation.

    benchmarks/probe_accuracy.py [--python PYTHON] [--bench-python PYTHON] [--requests 8] [--tokens 256]
                                 [--bench-levels 1,4,16,64] [--bench-tokens 64] [--skip-bench]
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


def standin_pace(profile: str, args: dict):
    """The stand-in's own pace for a profile and server args (the collection's decode model)."""
    sys.path.insert(0, str(STANDIN_SRC))
    from sglang._standin.profile import load_profile, pace_for  # pylint: disable=import-outside-toplevel
    return pace_for(load_profile(profile), args)


def pace_case(python: str, workdir: Path, requests: int, tokens: int):
    """test-fast at true pace: decode at the model's 395.6 tok/s, TTFT = 5 ms + prompt / 200,000 tok/s."""
    decode, overhead, prefill = standin_pace("test-fast", {}).stream_tok_s(1), 0.005, 200000.0
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
                 "expected_decode_tps": round(decode, 3), "measured_decode_tps_mean": level["decode_tps"]["mean"],
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
    nextn = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
             "--speculative-num-draft-tokens", "4", "--enable-metrics"]
    spec_args = {"tp_size": 2, "speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
                 "speculative_num_draft_tokens": 4}
    cases = {"no_speculation": ([], standin_pace("a6000x2-27b-nextn", {"tp_size": 2})),
             "nextn_3_1_4": (nextn, standin_pace("a6000x2-27b-nextn", spec_args))}
    out = {"profile": "a6000x2-27b-nextn", "pace_scale": scale, "note": "figures scaled back to the profile's real pace"}
    from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import efficiency_verdict  # pylint: disable=import-outside-toplevel
    for name, (flags, pace) in cases.items():
        server = StandIn(python, "a6000x2-27b-nextn", scale, ["--tp", "2"] + flags, workdir)
        try:
            server.wait_ready()
            results = run_probe(server.url, concurrency=[1], requests_per_level=4, output_tokens=tokens,
                                ceiling={"model_config": STORY_CONFIG, **STORY_BOX})
        finally:
            server.stop()
        level = results["levels"][0]
        measured = level["decode_tps"]["mean"] * scale
        ceiling = results["ceiling"] or {}
        # the probe's expectation is priced at this run's accept length; scaled back to the box's pace
        scaled = dict(ceiling, tokens_per_s=ceiling.get("tokens_per_s"))
        out[name] = {
            "stand_in_pace_tps": round(pace.stream_tok_s(1), 2), "measured_decode_tps": round(measured, 2),
            "decode_error_pct": pct(measured, pace.stream_tok_s(1) * (results["accept_length"] or 1.0) / pace.accept_length),
            "expected_accept_length": round(pace.accept_length, 4) if flags else None, "measured_accept_length": results["accept_length"],
            "accept_length_source": results["accept_length_source"],
            "expected_tokens_per_s": (ceiling.get("expected") or {}).get("tokens_per_s"), "bound_tokens_per_s": ceiling.get("tokens_per_s"),
            "verdict": efficiency_verdict(measured, scaled)["verdict"] if ceiling else results.get("ceiling_error"),
        }
    return out


def ceiling_case():
    from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import decode_ceiling  # pylint: disable=import-outside-toplevel
    from_config = decode_ceiling(STORY_CONFIG, **STORY_BOX)
    from_count = decode_ceiling(27, dtype="bf16", num_layers=64, hidden_size=5120, **STORY_BOX)
    spec = decode_ceiling(STORY_CONFIG, accept_length=2.863, speculative={"algorithm": "NEXTN", "num_steps": 3}, **STORY_BOX)

    def brief(c):
        return {"bound_tokens_per_s": c["tokens_per_s"], "expected_tokens_per_s": c["expected"]["tokens_per_s"],
                "expected_band_tokens_per_s": [c["expected"]["low"], c["expected"]["high"]], "per_step_ms": c["per_step_ms"],
                "expected_per_step_ms": c["expected"]["per_step_ms"], "bound": c["bound"],
                "weight_gb_per_step": round(c["inputs"]["weight_bytes_per_step"] / 1e9, 2),
                "allreduces_per_step": c["inputs"]["allreduces_per_step"], "allreduce_latency_us": c["inputs"]["allreduce_latency_us"]}
    return {"box": "27B dense bf16, 2x RTX A6000 (768 GB/s), PCIe Gen4 x16 via host bridge (PHB), TP 2",
            "from_config_json": brief(from_config), "from_27b_param_count": brief(from_count),
            "nextn_3_steps_at_accept_length_2.863": {"bound": spec["tokens_per_s"], "expected": spec["expected"]["tokens_per_s"],
                                                     "cycle": spec["expected"]["speculative"]},
            "pass": all(26.0 <= c["tokens_per_s"] <= 30.0 for c in (from_config, from_count))}


# --- the probe against SGLang's own bench ------------------------------------------------------------------

BENCH_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
               "mike", "november", "oscar", "papa")
TOKENIZER_SCRIPT = r"""
import json, os, sys
from tokenizers import Regex, Tokenizer, models, pre_tokenizers
out, words = sys.argv[1], json.load(open(sys.argv[2]))
vocab = {"[UNK]": 0}
for word in words:
    vocab.setdefault(word, len(vocab))
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                             pre_tokenizers.Split(Regex(r"\w+|[^\w\s]"), behavior="isolated")])
os.makedirs(out, exist_ok=True)
tok.save(os.path.join(out, "tokenizer.json"))
json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "model_max_length": 1000000},
          open(os.path.join(out, "tokenizer_config.json"), "w"))
"""


def bench_prompts(first: int, count: int, words: int = 120) -> list:
    """``count`` distinct prompts of equal token count (the stand-in's rule: a word or one punctuation mark)."""
    import random  # pylint: disable=import-outside-toplevel
    rnd = random.Random(first)
    return ["Request %d: %s." % (first + i, " ".join(rnd.choice(BENCH_WORDS) for _word in range(words))) for i in range(count)]


def bench_python_path(given: str) -> str:
    """The bench's interpreter: --bench-python, else the CPU venv tools/dev/sglang-cpu-venv builds (or finds)."""
    if given:
        return given
    script = ROOT / "tools" / "dev" / "sglang-cpu-venv"
    done = subprocess.run([str(script)], capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise RuntimeError("tools/dev/sglang-cpu-venv failed (%d): %s" % (done.returncode, done.stderr.strip()[-400:]))
    return str(Path(done.stdout.strip().splitlines()[-1]) / "bin" / "python")


def server_ttft(url: str) -> tuple:
    """The stand-in's own TTFT histogram (sum, count): the server-side view of the same requests."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode("utf-8", "replace")
    total = count = 0.0
    for line in text.splitlines():
        if line.startswith("sglang:time_to_first_token_seconds_sum"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith("sglang:time_to_first_token_seconds_count"):
            count += float(line.rsplit(" ", 1)[1])
    return total, count


def server_mean_ms(before: tuple, after: tuple) -> float:
    """Server-side mean TTFT in ms between two readings (the run's warmup request included)."""
    return round((after[0] - before[0]) / max(after[1] - before[1], 1.0) * 1e3, 2)


def flush_cache(url: str) -> None:
    req = urllib.request.Request(url + "/flush_cache", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=10):
        pass


def run_bench(bench_python: str, url: str, model: str, tokenizer: Path, dataset: Path, count: int, concurrency: int, tokens: int,
              out: Path) -> dict:
    """One run of ``python -m sglang.benchmark.serving``; its JSON result line."""
    cmd = [bench_python, "-m", "sglang.benchmark.serving", "--backend", "sglang-oai-chat", "--base-url", url, "--model", model,
           "--tokenizer", str(tokenizer), "--dataset-name", "custom", "--dataset-path", str(dataset), "--num-prompts", str(count),
           "--sharegpt-output-len", str(tokens), "--max-concurrency", str(concurrency), "--warmup-requests", "1",
           "--extra-request-body", json.dumps({"stream_options": {"include_usage": True}}), "--output-file", str(out),
           "--output-details", "--disable-tqdm"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, check=False)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError("sglang.benchmark.serving failed (%d): %s" % (done.returncode, (done.stdout + done.stderr).strip()[-800:]))
    return json.loads(out.read_text(encoding="utf-8").strip().splitlines()[-1])


def within(probe: float, bench: float, slack_ms: float, pct_allowed: float) -> bool:
    return abs(probe - bench) <= slack_ms + pct_allowed / 100.0 * abs(bench)


def bench_case(python: str, bench_python: str, workdir: Path, levels, tokens: int, scale: float = 1.0, words: int = 40,
               rounds: int = 4) -> dict:
    """The probe and sglang.benchmark.serving on the same stand-in, same requests, at each concurrency.

    At the box's true pace (``scale`` 1) and with short prompts the server writes few chunks a second even at
    concurrency 64, so what is compared is the clients, not a loaded stand-in. Each level sends ``rounds`` times its
    concurrency (at least 32): in a closed loop of equal requests the streams arrive in groups, and with two groups
    (8 requests at concurrency 4) the median falls between them and moves by a whole group's TTFT."""
    out: dict = {"profile": "a6000x2-27b-nextn", "pace_scale": scale, "endpoint": "chat (bench: sglang-oai-chat)",
                 "output_tokens": tokens, "prompt_tokens": words + 4, "tolerance": "TTFT mean and median within 5 ms + 2%, mean TPOT within 2% (matching mode)"}
    try:
        bench_python = bench_python_path(bench_python)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        out.update(error="no bench client: %s" % exc, passed=False)
        return out
    counts = {c: max(32, rounds * c) for c in levels}
    first = 0
    words_file = workdir / "bench-words.json"
    vocab = set(BENCH_WORDS) | {"Request", ":", ".", "ok"} | {str(i) for i in range(10 * sum(counts.values()) + 10)}
    words_file.write_text(json.dumps(sorted(vocab)))
    tokenizer = workdir / "bench-tokenizer"
    subprocess.run([bench_python, "-c", TOKENIZER_SCRIPT, str(tokenizer), str(words_file)], check=True, timeout=300)
    server = StandIn(python, "a6000x2-27b-nextn", scale, ["--tp", "2", "--enable-metrics"], workdir)
    rows = []
    try:
        server.wait_ready()
        with urllib.request.urlopen(server.url + "/v1/models", timeout=10) as resp:
            model = json.loads(resp.read())["data"][0]["id"]
        for conc in levels:
            count = counts[conc]
            row: dict = {"concurrency": conc, "requests": count}
            prompts = bench_prompts(first, count, words)
            first += count
            dataset = workdir / ("bench-%d.jsonl" % conc)
            turns = [{"conversations": [{"role": "user", "content": p}, {"role": "assistant", "content": "ok"}]} for p in prompts]
            dataset.write_text("".join(json.dumps(turn) + "\n" for turn in turns))
            flush_cache(server.url)
            before = server_ttft(server.url)
            bench = run_bench(bench_python, server.url, model, tokenizer, dataset, count, conc, tokens, workdir / ("bench-%d.out" % conc))
            row["bench"] = {"completed": bench["completed"], "server_ttft_ms_mean": server_mean_ms(before, server_ttft(server.url)),
                            "ttft_ms_mean": round(bench["mean_ttft_ms"], 2),
                            "ttft_ms_median": round(bench["median_ttft_ms"], 2), "ttft_ms_std": round(bench["std_ttft_ms"], 2),
                            "tpot_ms_mean": round(bench["mean_tpot_ms"], 3),
                            "output_throughput": round(bench["output_throughput"], 2)}
            for mode in ("per-request", "keep-alive"):
                flush_cache(server.url)
                before = server_ttft(server.url)
                # the bench sends its prompts in shuffled order; equal lengths make the order irrelevant
                results = run_probe(server.url, endpoint="chat", connection=mode, concurrency=[conc], requests_per_level=count,
                                    output_tokens=tokens, prompts=prompts, unique_prompts=False, continuous_usage=False,
                                    warmup_requests=1, include_requests=False)
                level = results["levels"][0]
                row[mode] = {"completed": level["completed"], "server_ttft_ms_mean": server_mean_ms(before, server_ttft(server.url)),
                             "ttft_ms_mean": level["ttft_ms"]["mean"],
                             "ttft_ms_median": level["ttft_ms"]["p50"], "tpot_ms_mean": level["tpot_ms"]["mean"],
                             "connect_ms_mean": (level.get("connect_ms") or {}).get("mean"),
                             "output_throughput": level["output_throughput"]}
            probe, ref = row["per-request"], row["bench"]
            row["ttft_mean_diff_ms"] = round(probe["ttft_ms_mean"] - ref["ttft_ms_mean"], 2)
            row["ttft_median_diff_ms"] = round(probe["ttft_ms_median"] - ref["ttft_ms_median"], 2)
            row["tpot_diff_pct"] = pct(probe["tpot_ms_mean"], ref["tpot_ms_mean"])
            row["keep_alive_ttft_mean_diff_ms"] = round(row["keep-alive"]["ttft_ms_mean"] - ref["ttft_ms_mean"], 2)
            # what each client adds to the server's own TTFT (connect, request building, event-loop delay)
            row["client_overhead_ms"] = {name: round(row[name]["ttft_ms_mean"] - row[name]["server_ttft_ms_mean"], 2)
                                         for name in ("bench", "per-request", "keep-alive")}
            row["pass"] = (probe["completed"] == ref["completed"] == count
                           and within(probe["ttft_ms_mean"], ref["ttft_ms_mean"], 5.0, 2.0)
                           and within(probe["ttft_ms_median"], ref["ttft_ms_median"], 5.0, 2.0)
                           and within(probe["tpot_ms_mean"], ref["tpot_ms_mean"], 0.0, 2.0))
            rows.append(row)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        out.update(error=str(exc))
    finally:
        server.stop()
    out["levels"] = rows
    out["passed"] = bool(rows) and len(rows) == len(levels) and all(r["pass"] for r in rows) and "error" not in out
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the stand-in")
    parser.add_argument("--bench-python", default="", help="interpreter with SGLang's bench client (default: tools/dev/sglang-cpu-venv)")
    parser.add_argument("--requests", type=int, default=8, help="requests per level in the pace case")
    parser.add_argument("--tokens", type=int, default=256, help="output tokens per request")
    parser.add_argument("--bench-levels", default="1,4,16,64", help="concurrency levels of the bench comparison")
    parser.add_argument("--bench-tokens", type=int, default=128, help="output tokens per request in the bench comparison")
    parser.add_argument("--bench-pace-scale", type=float, default=1.0, help="the stand-in's pace scale in the bench comparison")
    parser.add_argument("--bench-words", type=int, default=40, help="words per prompt in the bench comparison")
    parser.add_argument("--bench-rounds", type=int, default=4, help="requests per level in the bench comparison, as a multiple of its concurrency")
    parser.add_argument("--skip-bench", action="store_true", help="leave the bench comparison out")
    parser.add_argument("--only-bench", action="store_true", help="run the bench comparison alone")
    args = parser.parse_args()
    if not (STANDIN_SRC / "sglang" / "_standin").is_dir():
        raise SystemExit("tools/standins/sglang/src is missing: this benchmark measures against the stand-in")
    import_collection()
    workdir = Path(tempfile.mkdtemp(prefix="probe-accuracy-"))
    started = time.time()
    report: dict = {"benchmark": "probe_accuracy"}
    passed = True
    if not args.only_bench:
        report["pace"] = pace_case(args.python, workdir, args.requests, args.tokens)
        report["story"] = story_case(args.python, workdir, args.tokens)
        report["ceiling"] = ceiling_case()
        passed = report["pace"]["pass"] and report["ceiling"]["pass"]
    if not args.skip_bench:
        bench = bench_case(args.python, args.bench_python, workdir, [int(c) for c in args.bench_levels.split(",")], args.bench_tokens,
                           args.bench_pace_scale, args.bench_words, args.bench_rounds)
        report["bench"] = bench
        passed = passed and bench["passed"]
    report["pass"] = passed
    report["wall_s"] = round(time.time() - started, 1)
    print(json.dumps(report, indent=2))
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
