# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One probe run from options to results: warmup, the concurrency sweep, accept length, ceiling, gates, report.

Why here and not in the module: ``sglang_probe`` and ``sglang_launch`` (the probe as the last gate of a launch)
run the same probe with the same options. Both import ``ARGUMENT_SPEC`` (the option names, types and defaults)
and ``probe_and_gate`` from this file, so the two modules cannot drift apart.

Network: the server's ``/v1/models`` (model name), ``/server_info`` (version, TP size, speculative settings: the
API key it also contains is never read into results), ``/metrics`` when enabled (speculative counters), and the
streaming endpoint. Files: ``prompts_file``, ``baseline`` and ``ceiling.model_config_path`` are read, and
``report_path`` written, on the host where the module runs.

Runs on the target's or the controller's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import binascii
import datetime
import json
import os
import re
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import (
    CeilingError,
    decode_ceiling,
    efficiency_verdict,
    server_args_inputs,
    with_accept_length,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.client import CONNECTION_MODES, ProbeClient, ProbeHTTPError
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.gates import evaluate, gate_level
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.metrics import level_metrics, request_rows
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.prompts import LENGTHS, load_prompts_file, shipped_prompts
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.report import render_markdown
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import ENDPOINTS, timing_from_capture

DEFAULT_CONCURRENCY = [1, 4, 16]

ARGUMENT_SPEC: Dict[str, Any] = {
    "base_url": {"type": "str", "default": "http://127.0.0.1:30000"},
    "api_key": {"type": "str", "no_log": True},
    "model": {"type": "str"},
    "endpoint": {"type": "str", "default": "completions", "choices": list(ENDPOINTS)},
    "connection": {"type": "str", "default": "keep-alive", "choices": list(CONNECTION_MODES)},
    "concurrency": {"type": "list", "elements": "int", "default": list(DEFAULT_CONCURRENCY)},
    "requests_per_level": {"type": "int"},
    "output_tokens": {"type": "int", "default": 256, "no_log": False},
    "warmup_requests": {"type": "int", "default": 1},
    "prompt_lengths": {"type": "list", "elements": "str", "default": list(LENGTHS), "choices": list(LENGTHS)},
    "prompts": {"type": "list", "elements": "str"},
    "prompts_file": {"type": "path"},
    "unique_prompts": {"type": "bool", "default": True},
    "temperature": {"type": "float", "default": 0.0},
    "continuous_usage": {"type": "bool", "default": True},
    "timeout": {"type": "float", "default": 600.0},
    "validate_certs": {"type": "bool", "default": True},
    "min_decode_tps": {"type": "float"},
    "max_ttft_ms": {"type": "float"},
    "gate_concurrency": {"type": "int"},
    "baseline": {"type": "raw"},
    "baseline_tolerance": {"type": "float", "default": 5.0},
    "baseline_ttft_slack_ms": {"type": "float", "default": 5.0},
    "ceiling": {"type": "dict"},
    "report_path": {"type": "path"},
    "include_requests": {"type": "bool", "default": False},
}
MUTUALLY_EXCLUSIVE = [["prompts", "prompts_file"]]

# Inputs of decode_ceiling() that a ``ceiling`` option may carry.
CEILING_KEYS = ("gpu", "tp", "link", "pcie_gen", "pcie_width", "accept_length", "bandwidth_gbs", "gpu_facts", "p2p", "params_b",
                "active_params_b", "dtype", "bytes_per_param", "num_layers", "hidden_size", "allreduce_latency_us", "achievable_fraction",
                "cuda_graphs", "custom_allreduce", "torch_compile", "speculative", "sustained_fraction", "nnodes",
                "internode_bus_gbs", "internode_latency_us")
# /server_info fields (resolved server args) that decide the expectation (gpu/ceiling.py server_args_inputs).
SERVER_ARG_KEYS = ("tp_size", "disable_cuda_graph", "disable_custom_all_reduce", "enable_torch_compile", "speculative_algorithm",
                   "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens", "nnodes")
WARMUP_MAX_TOKENS = 64
_METRIC_LINE = re.compile(r"^(sglang:[a-z_]+)(\{[^}]*\})?\s+([0-9.eE+-]+|NaN)\s*$")


class ProbeError(Exception):
    """The probe could not run (server unreachable, warmup rejected, bad option); the message says why."""


def default_requests(concurrency: int) -> int:
    """Requests in a level when not set: two full waves, at least four (enough for a p50 that means something)."""
    return max(4, 2 * int(concurrency))


def build_payload(endpoint: str, model: Optional[str], prompt: str, max_tokens: int, temperature: float,
                  continuous_usage: bool) -> Dict[str, Any]:
    """The request body: exact output length (``ignore_eos``), streamed, usage reported by the server."""
    if endpoint == "generate":
        return {"text": prompt, "stream": True,
                "sampling_params": {"max_new_tokens": max_tokens, "temperature": temperature, "ignore_eos": True}}
    body: Dict[str, Any] = {"model": model or "default", "max_tokens": max_tokens, "temperature": temperature, "stream": True,
                            "ignore_eos": True, "stream_options": {"include_usage": True}}
    if continuous_usage:
        body["stream_options"]["continuous_usage_stats"] = True
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


def resolve_prompts(params: Dict[str, Any]) -> Tuple[List[str], str]:
    """The prompt list and a description of where it came from."""
    if params.get("prompts"):
        prompts = [p for p in params["prompts"] if p and p.strip()]
        if not prompts:
            raise ProbeError("prompts holds no non-empty prompt")
        return prompts, "the prompts option (%d)" % len(prompts)
    if params.get("prompts_file"):
        try:
            prompts = load_prompts_file(params["prompts_file"])
        except (OSError, ValueError) as exc:
            raise ProbeError("prompts_file %s: %s" % (params["prompts_file"], exc)) from exc
        return prompts, "%s (%d)" % (os.path.basename(params["prompts_file"]), len(prompts))
    lengths = params.get("prompt_lengths") or list(LENGTHS)
    try:
        prompts = shipped_prompts(lengths)
    except ValueError as exc:
        raise ProbeError(str(exc)) from exc
    return prompts, "shipped coding set, %s (%d)" % (", ".join(n for n in LENGTHS if n in lengths), len(prompts))


def load_baseline(value: Any) -> Any:
    """A baseline given as a dict/list, or as a path to a JSON file written by an earlier probe."""
    if value is None or isinstance(value, (dict, list)):
        return value
    path = str(value)
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise ProbeError("baseline %s: %s" % (path, exc)) from exc


def server_facts(info: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The few /server_info fields the probe uses; everything else (including api_key) is dropped here."""
    if not isinstance(info, dict):
        return {}
    if "decode" in info and isinstance(info["decode"], list) and info["decode"]:
        info = info["decode"][0]
    states = info.get("internal_states") if isinstance(info.get("internal_states"), list) else []
    accepts = [s.get("avg_spec_accept_length") for s in states if isinstance(s, dict) and isinstance(s.get("avg_spec_accept_length"), (int, float))]
    return {
        "version": info.get("version"),
        "args": {k: info.get(k) for k in SERVER_ARG_KEYS if info.get(k) is not None},
        "tp_size": info.get("tp_size"),
        "speculative_algorithm": info.get("speculative_algorithm"),
        "model_path": info.get("model_path"),
        "served_model_name": info.get("served_model_name"),
        "avg_spec_accept_length": sum(accepts) / len(accepts) if accepts else None,
    }


def parse_spec_metrics(text: str) -> Dict[str, float]:
    """``sglang:spec_verify_calls_total`` and ``sglang:generation_tokens_total`` from Prometheus text.

    Series are summed over label sets; when a metric carries ``tp_rank``, only rank 0 counts (every TP rank
    reports the same steps).
    """
    series: Dict[str, List[Tuple[str, float]]] = {}
    for line in text.splitlines():
        match = _METRIC_LINE.match(line.strip())
        if not match or match.group(3) == "NaN":
            continue
        name = match.group(1)
        if name in ("sglang:spec_verify_calls_total", "sglang:generation_tokens_total"):
            series.setdefault(name, []).append((match.group(2) or "", float(match.group(3))))
    out: Dict[str, float] = {}
    for name, items in series.items():
        if any("tp_rank=" in labels for labels, _value in items):
            items = [(labels, v) for labels, v in items if 'tp_rank="0"' in labels]
        out[name] = sum(value for _labels, value in items)
    return out


class Probe:
    """A probe run. ``clock`` and ``client`` are injectable for tests."""

    def __init__(self, params: Dict[str, Any], client: Optional[ProbeClient] = None, clock: Callable[[], float] = time.time) -> None:
        self.params = dict(params)
        for key, spec in ARGUMENT_SPEC.items():
            if key not in self.params and "default" in spec:
                self.params[key] = spec["default"]
        self.clock = clock
        self._validate()
        self.client = client or ProbeClient(self.params["base_url"], self.params.get("api_key"), float(self.params["timeout"]),
                                            bool(self.params.get("validate_certs", True)))
        self.endpoint = self.params["endpoint"]
        self.path = ENDPOINTS[self.endpoint]
        self.run_id = binascii.hexlify(os.urandom(3)).decode("ascii")
        self.model: Optional[str] = self.params.get("model")
        self._metrics_ok: Optional[bool] = None

    def _validate(self) -> None:
        p = self.params
        levels = p.get("concurrency") or []
        if not levels or any(int(c) < 1 for c in levels):
            raise ProbeError("concurrency must be a non-empty list of integers >= 1 (got %r)" % (levels,))
        if int(p["output_tokens"]) < 2:
            raise ProbeError("output_tokens must be >= 2: TPOT and decode tokens/s need a second token")
        if int(p["warmup_requests"]) < 0:
            raise ProbeError("warmup_requests must be >= 0")
        if p.get("requests_per_level") is not None and int(p["requests_per_level"]) < 1:
            raise ProbeError("requests_per_level must be >= 1")
        if float(p["timeout"]) <= 0:
            raise ProbeError("timeout must be positive")
        if p.get("prompts") and p.get("prompts_file"):
            raise ProbeError("prompts and prompts_file are mutually exclusive")

    # --- server side readings --------------------------------------------------------------------------

    def _server_info(self) -> Dict[str, Any]:
        try:
            return server_facts(self.client.get_json("/server_info"))
        except ProbeHTTPError:
            return {}

    def _discover_model(self) -> Optional[str]:
        try:
            data = self.client.get_json("/v1/models")
        except ProbeHTTPError as exc:
            raise ProbeError("cannot reach the server at %s: %s" % (self.params["base_url"], exc)) from exc
        if isinstance(data, dict) and isinstance(data.get("data"), list) and data["data"]:
            first = data["data"][0]
            if isinstance(first, dict) and first.get("id"):
                return str(first["id"])
        return None

    def _spec_counters(self) -> Dict[str, float]:
        """Speculative counters from /metrics (when the server was started with --enable-metrics)."""
        if self._metrics_ok is False:
            return {}
        try:
            status, body = self.client.get("/metrics", timeout=10.0)
        except ProbeHTTPError:
            self._metrics_ok = False
            return {}
        if status != 200:
            self._metrics_ok = False
            return {}
        counters = parse_spec_metrics(body.decode("utf-8", "replace"))
        self._metrics_ok = "sglang:spec_verify_calls_total" in counters
        return counters if self._metrics_ok else {}

    # --- requests --------------------------------------------------------------------------------------

    def _bodies(self, prompts: Sequence[str], count: int, offset: int, max_tokens: int, tag: str) -> List[bytes]:
        p = self.params
        out = []
        for i in range(count):
            prompt = prompts[(offset + i) % len(prompts)]
            if p.get("unique_prompts", True):
                # A distinct first line per request, so the radix cache cannot serve a prompt a second time.
                prompt = "[probe %s %s-%d]\n%s" % (self.run_id, tag, i, prompt)
            payload = build_payload(self.endpoint, self.model, prompt, max_tokens, float(p.get("temperature") or 0.0),
                                    bool(p.get("continuous_usage", True)))
            out.append(json.dumps(payload).encode("utf-8"))
        return out

    def _warmup(self, prompts: Sequence[str]) -> None:
        count = int(self.params["warmup_requests"])
        if not count:
            return
        max_tokens = min(int(self.params["output_tokens"]), WARMUP_MAX_TOKENS)
        captures = self.client.run_level(self.path, self._bodies(prompts, count, 0, max_tokens, "w"), 1, self.params["connection"])[0]
        timings = [timing_from_capture(c, self.endpoint, max_tokens) for c in captures]
        if not any(t.ok for t in timings):
            raise ProbeError("the warmup request failed, nothing was measured: %s" % (timings[0].error if timings else "no request sent"))

    def run(self) -> Dict[str, Any]:
        """Run the probe and return the results (gates included, nothing written)."""
        p = self.params
        started = self.clock()
        prompts, prompt_source = resolve_prompts(p)
        baseline = load_baseline(p.get("baseline"))
        self.model = p.get("model") or (self._discover_model() if self.endpoint != "generate" else None)
        server = self._server_info()
        if not self.model and self.endpoint != "generate":
            self.model = server.get("served_model_name")
        self._warmup(prompts)
        levels: List[Dict[str, Any]] = []
        offset = 0
        sources = set()
        for conc in [int(c) for c in p["concurrency"]]:
            count = int(p["requests_per_level"]) if p.get("requests_per_level") else default_requests(conc)
            bodies = self._bodies(prompts, count, offset, int(p["output_tokens"]), "c%d" % conc)
            offset += count
            before = self._spec_counters()
            captures, duration = self.client.run_level(self.path, bodies, conc, self.params["connection"])
            after = self._spec_counters()
            timings = [timing_from_capture(c, self.endpoint, int(p["output_tokens"])) for c in captures]
            level = level_metrics(timings, duration, conc)
            if level["accept_length"] is not None:
                sources.add("per-request meta_info (spec_verify_ct)")
            else:
                verify = after.get("sglang:spec_verify_calls_total", 0.0) - before.get("sglang:spec_verify_calls_total", 0.0)
                tokens = after.get("sglang:generation_tokens_total", 0.0) - before.get("sglang:generation_tokens_total", 0.0)
                if verify > 0 and tokens > 0:
                    level["accept_length"] = round(tokens / verify, 4)
                    sources.add("/metrics counters read before and after each level")
            if p.get("include_requests"):
                level["request_details"] = request_rows(timings)
            levels.append(level)
        accept, accept_source = self._run_accept(levels, server, sources)
        results: Dict[str, Any] = {
            "base_url": p["base_url"],
            "endpoint": self.endpoint,
            "connection": self.params["connection"],
            "model": self.model or server.get("served_model_name") or server.get("model_path"),
            "server_version": server.get("version"),
            "server_tp_size": server.get("tp_size"),
            "speculative_algorithm": server.get("speculative_algorithm"),
            "output_tokens": int(p["output_tokens"]),
            "warmup_requests": int(p["warmup_requests"]),
            "prompt_source": prompt_source,
            "levels": levels,
            "accept_length": accept,
            "accept_length_source": accept_source,
            "started_at": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        self._add_ceiling(results, server, accept)
        results["gates"] = evaluate(levels, p.get("min_decode_tps"), p.get("max_ttft_ms"), p.get("gate_concurrency"), baseline,
                                    float(p.get("baseline_tolerance") or 0.0), float(p.get("baseline_ttft_slack_ms") or 0.0))
        results["duration_s"] = round(self.clock() - started, 3)
        results["markdown"] = render_markdown(results)
        return results

    def _run_accept(self, levels: List[Dict[str, Any]], server: Dict[str, Any], sources: set) -> Tuple[Optional[float], Optional[str]]:
        """The run's accept length (the batch-1 level's when known) and where it came from."""
        level = gate_level(levels, self.params.get("gate_concurrency")) or (levels[0] if levels else None)
        for candidate in ([level] if level else []) + levels:
            if candidate and candidate.get("accept_length"):
                return candidate["accept_length"], " and ".join(sorted(sources)) or None
        if server.get("speculative_algorithm") and server.get("avg_spec_accept_length"):
            after = self._server_info()
            value = after.get("avg_spec_accept_length") or server["avg_spec_accept_length"]
            return round(float(value), 4), "/server_info avg_spec_accept_length (cumulative since the server started, not this run alone)"
        return None, None

    def _add_ceiling(self, results: Dict[str, Any], server: Dict[str, Any], accept: Optional[float]) -> None:
        """Ceiling, efficiency and verdict, when a ``ceiling`` option was given; errors are reported, not raised."""
        spec = self.params.get("ceiling")
        results.update({"ceiling": None, "ceiling_error": None, "efficiency": None, "efficiency_of_bound": None,
                        "efficiency_concurrency": None, "verdict": None})
        if not spec:
            return
        try:
            ceiling = resolve_ceiling(spec, server, accept)
        except CeilingError as exc:
            results["ceiling_error"] = str(exc)
            return
        results["ceiling"] = ceiling
        level = gate_level(results["levels"], self.params.get("gate_concurrency"))
        measured = ((level or {}).get("decode_tps") or {}).get("mean")
        verdict = efficiency_verdict(measured, ceiling)
        results["efficiency"] = verdict["efficiency"]
        results["efficiency_of_bound"] = verdict["efficiency_of_bound"]
        results["verdict"] = verdict["verdict"]
        results["efficiency_concurrency"] = (level or {}).get("concurrency")
        if level and int(level.get("concurrency", 1)) != 1 and verdict["verdict"]:
            results["verdict"] += " (measured at concurrency %s: the expectation and the bound are batch-1 figures)" % level.get("concurrency")


def resolve_ceiling(spec: Dict[str, Any], server: Dict[str, Any], accept: Optional[float]) -> Dict[str, Any]:
    """The ceiling for a ``ceiling`` option: a precomputed filter result (rescaled to the run's accept length and
    the server's speculative settings), or computed from its inputs, with TP, CUDA graphs, custom all-reduce,
    torch.compile, speculative settings and the model's config.json taken from the server when not given."""
    served = server_args_inputs(server.get("args"))
    if spec.get("tokens_per_s") is not None:
        if served.get("speculative") or (accept and accept > 1.0):
            return with_accept_length(spec, accept, served.get("speculative"))
        return dict(spec)
    kwargs = {k: spec[k] for k in CEILING_KEYS if spec.get(k) is not None}
    for key, value in served.items():
        kwargs.setdefault(key, value)
    model = spec.get("model_config")
    path = spec.get("model_config_path")
    if model is None and path:
        model = _read_config(str(path))
    if model is None and kwargs.get("params_b") is None:
        local = os.path.join(str(server.get("model_path") or ""), "config.json")
        if server.get("model_path") and os.path.isfile(local):
            model = _read_config(local)
    if "tp" not in kwargs and server.get("tp_size"):
        kwargs["tp"] = int(server["tp_size"])
    if "accept_length" not in kwargs and accept:
        kwargs["accept_length"] = accept
    return decode_ceiling(model, **kwargs)


def _read_config(path: str) -> Dict[str, Any]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise CeilingError("model config %s: %s" % (path, exc)) from exc
    if not isinstance(data, dict):
        raise CeilingError("model config %s is not a JSON object" % path)
    return data


def report_paths(report_path: str) -> Tuple[str, str]:
    """The JSON and Markdown paths for ``report_path`` (``x.json`` -> ``x.json`` and ``x.md``)."""
    base = report_path[:-5] if report_path.endswith(".json") else report_path
    return base + ".json", base + ".md"


def write_report(results: Dict[str, Any], report_path: str) -> List[str]:
    """Write the results as JSON and the Markdown report beside it; returns both paths."""
    json_path, md_path = report_paths(report_path)
    folder = os.path.dirname(json_path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    record = {k: v for k, v in results.items() if k != "markdown"}
    for path, text in ((json_path, json.dumps(record, indent=2, sort_keys=True) + "\n"), (md_path, results.get("markdown") or "")):
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    return [json_path, md_path]


def probe_and_gate(params: Dict[str, Any], client: Optional[ProbeClient] = None) -> Tuple[Dict[str, Any], Optional[str]]:
    """Run the probe, write the report when asked; returns (results, failure message or None).

    The failure message names every gate that missed with its figures; ProbeError propagates when the probe
    could not measure at all.
    """
    results = Probe(params, client=client).run()
    if params.get("report_path"):
        try:
            results["report_files"] = write_report(results, params["report_path"])
        except OSError as exc:
            raise ProbeError("report_path %s: %s" % (params["report_path"], exc)) from exc
    gates = results["gates"]
    return results, None if gates["passed"] else gates["message"]
