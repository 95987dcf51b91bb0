# -*- coding: utf-8 -*-
"""probe/runner promises that the end-to-end tests (test_probe_runner.py) leave open, stated exactly.

Why a scripted client: the probe's figures come from its client's captures, so a client that answers from a
script (no sockets, no clocks) lets each test state the exact requests sent and the exact results returned,
in seconds, with no timed assertion. The option table is checked against the module's documentation, the
ceiling keys against ``decode_ceiling()``'s keywords and the server argument keys against what
``server_args_inputs()`` reads, so each table is tested against what it must agree with.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import ssl
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.ceiling import (
    CeilingError,
    decode_ceiling,
    efficiency_verdict,
    server_args_inputs,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.client import ProbeHTTPError
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.gates import evaluate
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.prompts import shipped_prompts
from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.runner import (
    ARGUMENT_SPEC,
    CEILING_KEYS,
    MUTUALLY_EXCLUSIVE,
    SERVER_ARG_KEYS,
    Probe,
    ProbeError,
    build_payload,
    load_baseline,
    parse_spec_metrics,
    probe_and_gate,
    resolve_ceiling,
    resolve_prompts,
    server_facts,
    write_report,
)
from ansible_collections.gpufleet.sglang.plugins.modules import sglang_probe

NO_LOG_NEEDED = re.compile(r"(?:pass(?!ive)|secret|token|key)", re.I)
TTFT_S = 0.125          # first token 125 ms after the send (exact in binary floating point)
STEP_S = 0.03125        # 1/32 s between tokens at concurrency 1: 32 decode tokens/s
SMALL_CONFIG = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
                "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
OTHER_CONFIG = dict(SMALL_CONFIG, hidden_size=2048, num_hidden_layers=36, intermediate_size=11008, num_attention_heads=16)
# A /server_info of SGLang 0.5 (resolved server args at top level), trimmed to the fields the probe may read.
SERVER_INFO = {"version": "0.5.6", "tp_size": 2, "nnodes": 2, "disable_cuda_graph": True, "disable_custom_all_reduce": True,
               "enable_torch_compile": True, "speculative_algorithm": "EAGLE", "speculative_num_steps": 3,
               "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4, "model_path": "/models/qwen3-8b",
               "served_model_name": "qwen3-8b", "api_key": "SERVER-SECRET", "port": 30000, "mem_fraction_static": 0.88,
               "internal_states": [{"avg_spec_accept_length": 2.0}, {"avg_spec_accept_length": 3.0}, {"other": 1}, "noise"]}


# --- a scripted client ------------------------------------------------------------------------------------

def chunk(endpoint: str, tokens: int, verify: Optional[int]) -> bytes:
    """One streamed data payload carrying one more token, with the cumulative count (and verify steps)."""
    if endpoint == "generate":
        meta: Dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": tokens}
        if verify:
            meta["spec_verify_ct"] = verify
        return json.dumps({"text": "x" * tokens, "meta_info": meta}).encode()
    if endpoint == "chat":
        return json.dumps({"choices": [{"delta": {"content": "x"}}], "usage": {"prompt_tokens": 10, "completion_tokens": tokens}}).encode()
    return json.dumps({"choices": [{"text": "x"}], "usage": {"prompt_tokens": 10, "completion_tokens": tokens}}).encode()


class ScriptedClient:
    """Stands in for ProbeClient: GETs answered from a script, each level's requests answered with exact timings.

    ``metrics`` is the list of /metrics answers in order ((status, text) or a ProbeHTTPError); ``server_info`` the
    /server_info answers in order (the last one repeats); ``status`` maps a run_level call index to the HTTP status
    of all its requests; ``verify`` maps a concurrency to the spec_verify_ct of each /generate request.
    """

    def __init__(self, models: Any = None, server_info: Any = None, metrics: Optional[List[Any]] = None,
                 status: Optional[Dict[int, int]] = None, verify: Optional[Dict[int, int]] = None, endpoint: str = "completions",
                 empty_warmup: bool = False) -> None:
        self.models = {"data": [{"id": "Qwen/Qwen3-8B"}]} if models is None else models
        self.server_info = list(server_info) if isinstance(server_info, list) else [server_info]
        self.metrics = list(metrics or [])
        self.status = status or {}
        self.verify = verify or {}
        self.endpoint = endpoint
        self.empty_warmup = empty_warmup
        self.gets: List[str] = []
        self.levels: List[Tuple[str, List[Dict[str, Any]], int, str]] = []

    def get_json(self, path: str, timeout: float = 30.0) -> Any:
        """/v1/models and /server_info from the script; an exception in the script is raised."""
        del timeout
        self.gets.append(path)
        answer = self.models if path == "/v1/models" else (self.server_info.pop(0) if len(self.server_info) > 1 else self.server_info[0])
        if isinstance(answer, Exception):
            raise answer
        return answer

    def get(self, path: str, timeout: float = 30.0) -> Tuple[int, bytes]:
        """/metrics from the script, 404 once it runs out."""
        del timeout
        self.gets.append(path)
        answer = self.metrics.pop(0) if self.metrics else (404, "")
        if isinstance(answer, ProbeHTTPError):
            raise ProbeHTTPError(str(answer))
        return answer[0], answer[1].encode("utf-8") if isinstance(answer[1], str) else answer[1]

    def run_level(self, path: str, bodies: Sequence[bytes], concurrency: int, mode: str = "keep-alive") -> Tuple[List[Any], float]:
        """Every request: first token TTFT_S after its send, then one token every STEP_S x concurrency."""
        from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.stream import StreamCapture  # pylint: disable=import-outside-toplevel
        decoded = [json.loads(b) for b in bodies]
        index = len(self.levels)
        self.levels.append((path, decoded, concurrency, mode))
        if self.empty_warmup and index == 0:
            return [], 0.0
        captures = []
        for i, body in enumerate(decoded):
            start = 100.0 + i
            wanted = body["sampling_params"]["max_new_tokens"] if "sampling_params" in body else body["max_tokens"]
            status = self.status.get(index, 200)
            verify = self.verify.get(concurrency)
            events = [(start + TTFT_S + k * STEP_S * concurrency, chunk(self.endpoint, k + 1, verify)) for k in range(wanted)]
            events.append((events[-1][0], b"[DONE]"))
            captures.append(StreamCapture(start=start, events=events if status == 200 else [], status=status, end=events[-1][0]))
        return captures, float(len(bodies))


def clock(*values: float):
    """A clock that returns the given instants in turn."""
    times = iter(values)
    return lambda: next(times)


def probe(client: ScriptedClient, **params: Any) -> Probe:
    """A Probe on the scripted client with small sweeps unless the test says otherwise."""
    merged = {"base_url": "http://10.0.0.5:30000", "concurrency": [1, 2], "requests_per_level": 2, "output_tokens": 4,
              "warmup_requests": 1, "prompts": ["p0", "p1", "p2"]}
    merged.update(params)
    return Probe(merged, client=client, clock=clock(1764633600.0, 1764633612.34567))


def metrics_text(verify: Optional[float], tokens: Optional[float]) -> str:
    """Prometheus text as SGLang writes it with --enable-metrics (rank 0 and rank 1 series)."""
    lines = ["# HELP sglang:spec_verify_calls_total The number of verification forward passes"]
    for rank in (0, 1):
        if verify is not None:
            lines.append('sglang:spec_verify_calls_total{model_name="m",tp_rank="%d"} %s' % (rank, verify))
        if tokens is not None:
            lines.append('sglang:generation_tokens_total{model_name="m",tp_rank="%d"} %s' % (rank, tokens))
    return "\n".join(lines) + "\n"


# --- the tables -------------------------------------------------------------------------------------------

def documented_options() -> Dict[str, Dict[str, Any]]:
    """The options of sglang_probe's DOCUMENTATION (its argument_spec is ARGUMENT_SPEC)."""
    return yaml.safe_load(sglang_probe.DOCUMENTATION)["options"]


def test_argument_spec_is_the_documented_options():
    expected = {}
    for name, doc in documented_options().items():
        entry = {"type": doc["type"]}
        for key in ("elements", "default", "choices"):
            if key in doc:
                entry[key] = doc[key]
        expected[name] = entry
    stripped = {name: {k: v for k, v in spec.items() if k != "no_log"} for name, spec in ARGUMENT_SPEC.items()}
    assert stripped == expected


def test_defaults_of_an_empty_task_are_the_documented_ones():
    result = ArgumentSpecValidator(copy.deepcopy(ARGUMENT_SPEC), mutually_exclusive=MUTUALLY_EXCLUSIVE).validate({})
    assert not result.error_messages
    documented = {name: doc.get("default") for name, doc in documented_options().items()}
    assert result.validated_parameters == documented
    assert result.validated_parameters["concurrency"] == [1, 4, 16]


def test_prompts_and_prompts_file_are_refused_together_by_ansible():
    result = ArgumentSpecValidator(copy.deepcopy(ARGUMENT_SPEC), mutually_exclusive=MUTUALLY_EXCLUSIVE).validate(
        {"prompts": ["a"], "prompts_file": "/srv/prompts.txt"})
    assert [str(e) for e in result.errors] == ["parameters are mutually exclusive: prompts|prompts_file"]


def test_only_the_api_key_is_hidden_and_names_that_look_secret_say_so():
    result = ArgumentSpecValidator(copy.deepcopy(ARGUMENT_SPEC)).validate({"api_key": "sekrit", "output_tokens": 12, "model": "m"})
    assert result._no_log_values == {"sekrit"}  # pylint: disable=protected-access
    # ansible-test's validate-modules reports no_log_needed for a name like output_tokens unless no_log is set
    # either way (its NO_LOG_REGEX, restated here).
    looks_secret = {name: spec.get("no_log") for name, spec in ARGUMENT_SPEC.items() if NO_LOG_NEEDED.search(name)}
    assert looks_secret == {"api_key": True, "output_tokens": False}
    assert [name for name, spec in ARGUMENT_SPEC.items() if spec.get("no_log")] == ["api_key"]


def test_ceiling_keys_are_decode_ceilings_keywords():
    keywords = [name for name in inspect.signature(decode_ceiling).parameters if name not in ("model", "server_args")]
    assert sorted(CEILING_KEYS) == sorted(keywords)


def test_server_arg_keys_are_what_the_expectation_reads():
    facts = server_facts(SERVER_INFO)
    assert facts == {"version": "0.5.6",
                     "args": {"tp_size": 2, "disable_cuda_graph": True, "disable_custom_all_reduce": True, "enable_torch_compile": True,
                              "speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
                              "speculative_num_draft_tokens": 4, "nnodes": 2},
                     "tp_size": 2, "speculative_algorithm": "EAGLE", "model_path": "/models/qwen3-8b", "served_model_name": "qwen3-8b",
                     "avg_spec_accept_length": 2.5}
    assert server_args_inputs(facts["args"]) == server_args_inputs(SERVER_INFO)
    assert len(SERVER_ARG_KEYS) == len(set(SERVER_ARG_KEYS)) == 9


def test_disaggregated_server_info_reads_the_first_decode_server():
    info = {"prefill": [dict(SERVER_INFO, version="prefill", tp_size=8)], "decode": [dict(SERVER_INFO, tp_size=4, internal_states=[])]}
    facts = server_facts(info)
    assert facts["version"] == "0.5.6" and facts["tp_size"] == 4 and facts["args"]["tp_size"] == 4
    assert facts["avg_spec_accept_length"] is None
    assert server_facts({"decode": [], "version": "top"})["version"] == "top"
    assert server_facts({"decode": "not a list", "version": "top"})["version"] == "top"
    assert server_facts({"version": "1", "internal_states": "broken"})["avg_spec_accept_length"] is None
    assert server_facts(["not", "a", "dict"]) == {}


# --- payloads, prompts, baseline, metrics text ------------------------------------------------------------

def test_payloads_are_exact_for_each_endpoint():
    assert build_payload("completions", None, "hi", 7, 0.7, True) == {
        "model": "default", "max_tokens": 7, "temperature": 0.7, "stream": True, "ignore_eos": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True}, "prompt": "hi"}
    assert build_payload("chat", "m", "hi", 7, 0.0, False) == {
        "model": "m", "max_tokens": 7, "temperature": 0.0, "stream": True, "ignore_eos": True,
        "stream_options": {"include_usage": True}, "messages": [{"role": "user", "content": "hi"}]}


def test_user_prompts_drop_blank_ones_and_say_how_many():
    assert resolve_prompts({"prompts": ["a", "   ", "", "b"]}) == (["a", "b"], "the prompts option (2)")
    with pytest.raises(ProbeError) as info:
        resolve_prompts({"prompts": ["  ", "\n"]})
    assert str(info.value) == "prompts holds no non-empty prompt"


def test_prompts_file_is_read_and_named(tmp_path):
    path = tmp_path / "coding.txt"
    path.write_text("first prompt\n---\nsecond prompt\n")
    assert resolve_prompts({"prompts_file": str(path)}) == (["first prompt", "second prompt"], "coding.txt (2)")
    missing = tmp_path / "absent.txt"
    with pytest.raises(ProbeError) as info:
        resolve_prompts({"prompts_file": str(missing)})
    assert str(info.value).startswith("prompts_file %s: " % missing) and "No such file" in str(info.value)


def test_shipped_prompts_follow_the_chosen_lengths_in_their_own_order():
    prompts, source = resolve_prompts({"prompt_lengths": ["long", "short"]})
    assert prompts == shipped_prompts(["long", "short"])
    assert source == "shipped coding set, short, long (%d)" % len(prompts)
    every, source = resolve_prompts({"prompt_lengths": None})
    assert source == "shipped coding set, short, medium, long (%d)" % len(every) and every == shipped_prompts()


def test_baseline_is_a_value_or_a_json_file(tmp_path):
    assert load_baseline({"levels": []}) == {"levels": []}
    path = tmp_path / "old.json"
    path.write_text('{"levels": [{"concurrency": 1}]}')
    assert load_baseline(str(path)) == {"levels": [{"concurrency": 1}]}
    path.write_text("not json")
    with pytest.raises(ProbeError) as info:
        load_baseline(str(path))
    assert str(info.value).startswith("baseline %s: Expecting value" % path)


def test_spec_metrics_skip_nan_and_count_rank_zero_only():
    text = ('sglang:spec_verify_calls_total{tp_rank="0"} 10\n'
            'sglang:spec_verify_calls_total{tp_rank="1"} 99\n'
            'sglang:generation_tokens_total{tp_rank="0"} NaN\n'
            'sglang:generation_tokens_total{tp_rank="0"} 30\n'
            'sglang:generation_tokens_total 7\n')
    assert parse_spec_metrics(text) == {"sglang:spec_verify_calls_total": 10.0, "sglang:generation_tokens_total": 30.0}
    assert parse_spec_metrics("sglang:generation_tokens_total 3\nsglang:generation_tokens_total{a=\"b\"} 4\n") == {
        "sglang:generation_tokens_total": 7.0}


# --- the probe's own client and validation ----------------------------------------------------------------

def test_the_real_client_gets_the_documented_defaults():
    client = Probe({"base_url": "https://gpu-node-1:30000"}).client
    assert client.timeout == 600.0 and client.api_key is None
    assert client._ssl_context.verify_mode == ssl.CERT_REQUIRED  # pylint: disable=protected-access
    unverified = Probe({"base_url": "https://gpu-node-1:30000", "validate_certs": False, "api_key": "k", "timeout": 9}).client
    assert unverified._ssl_context.verify_mode == ssl.CERT_NONE  # pylint: disable=protected-access
    assert unverified.timeout == 9.0 and unverified.api_key == "k"


@pytest.mark.parametrize("bad, message", [
    ({"concurrency": [1, 0]}, "concurrency must be a non-empty list of integers >= 1 (got [1, 0])"),
    ({"output_tokens": 1}, "output_tokens must be >= 2: TPOT and decode tokens/s need a second token"),
    ({"warmup_requests": -1}, "warmup_requests must be >= 0"),
    ({"requests_per_level": 0}, "requests_per_level must be >= 1"),
    ({"timeout": 0}, "timeout must be positive"),
    ({"prompts": ["a"], "prompts_file": "/srv/p.txt"}, "prompts and prompts_file are mutually exclusive"),
])
def test_bad_options_are_refused_with_their_reason(bad, message):
    with pytest.raises(ProbeError) as info:
        Probe(dict({"base_url": "http://10.0.0.5:30000"}, **bad), client=ScriptedClient())
    assert str(info.value) == message


def test_the_smallest_allowed_values_are_accepted():
    client = ScriptedClient(server_info={})
    results = probe(client, output_tokens=2, timeout=0.5, warmup_requests=0, concurrency=[1], requests_per_level=1).run()
    assert results["output_tokens"] == 2 and [lv["output_tokens"] for lv in results["levels"]] == [2]
    assert [len(bodies) for _path, bodies, _c, _m in client.levels] == [1]      # no warmup level


# --- one run, exactly -------------------------------------------------------------------------------------

def test_a_run_sends_the_expected_requests_and_returns_the_expected_results():
    client = ScriptedClient(server_info=dict(SERVER_INFO, speculative_algorithm=None, internal_states=[]))
    pr = probe(client, temperature=0.5, continuous_usage=False, output_tokens=100, connection="per-request")
    results = pr.run()
    assert re.fullmatch("[0-9a-f]+", pr.run_id)
    warm_path, warm, warm_conc, warm_mode = client.levels[0]
    assert (warm_path, warm_conc, warm_mode) == ("/v1/completions", 1, "per-request")
    assert warm == [{"model": "Qwen/Qwen3-8B", "max_tokens": 64, "temperature": 0.5, "stream": True, "ignore_eos": True,
                     "stream_options": {"include_usage": True}, "prompt": "[probe %s w-0]\np0" % pr.run_id}]
    prompts = [[b["prompt"] for b in bodies] for _p, bodies, _c, _m in client.levels[1:]]
    assert prompts == [["[probe %s c1-0]\np0" % pr.run_id, "[probe %s c1-1]\np1" % pr.run_id],
                       ["[probe %s c2-0]\np2" % pr.run_id, "[probe %s c2-1]\np0" % pr.run_id]]
    assert [c for _p, _b, c, _m in client.levels] == [1, 1, 2]
    assert {b["max_tokens"] for _p, bodies, _c, _m in client.levels[1:] for b in bodies} == {100}
    scalars = {k: v for k, v in results.items() if k not in ("levels", "gates", "markdown")}
    assert scalars == {"base_url": "http://10.0.0.5:30000", "endpoint": "completions", "connection": "per-request",
                       "model": "Qwen/Qwen3-8B", "server_version": "0.5.6", "server_tp_size": 2, "speculative_algorithm": None,
                       "output_tokens": 100, "warmup_requests": 1, "prompt_source": "the prompts option (3)",
                       "accept_length": None, "accept_length_source": None, "started_at": "2025-12-02T00:00:00+00:00",
                       "ceiling": None, "ceiling_error": None, "efficiency": None, "efficiency_of_bound": None,
                       "efficiency_concurrency": None, "verdict": None, "duration_s": 12.346}
    assert [lv["decode_tps"]["mean"] for lv in results["levels"]] == [32.0, 16.0]
    assert "request_details" not in results["levels"][0]
    assert results["gates"] == evaluate(results["levels"])


def test_prompts_are_sent_as_given_when_not_made_unique():
    client = ScriptedClient(server_info={})
    probe(client, unique_prompts=False, concurrency=[1, 2, 4], requests_per_level=2, warmup_requests=2).run()
    assert [[b["prompt"] for b in bodies] for _p, bodies, _c, _m in client.levels] == [
        ["p0", "p1"], ["p0", "p1"], ["p2", "p0"], ["p1", "p2"]]
    assert all(b["stream_options"]["continuous_usage_stats"] is True for _p, bodies, _c, _m in client.levels for b in bodies)
    assert all(b["temperature"] == 0.0 for _p, bodies, _c, _m in client.levels for b in bodies)


def test_default_sweep_is_one_four_sixteen_with_two_waves_each():
    client = ScriptedClient(server_info={})
    params = {"base_url": "http://10.0.0.5:30000", "prompts": ["p"], "output_tokens": 2, "warmup_requests": 0}
    Probe(params, client=client, clock=clock(0.0, 1.0)).run()
    assert [(c, len(bodies)) for _p, bodies, c, _m in client.levels] == [(1, 4), (4, 8), (16, 32)]


def test_model_name_falls_back_to_the_served_name_then_the_path():
    client = ScriptedClient(models={"data": []}, server_info=SERVER_INFO)
    results = probe(client, warmup_requests=0).run()
    assert results["model"] == "qwen3-8b" and client.levels[0][1][0]["model"] == "qwen3-8b"
    for models in ({"data": [{"id": ""}]}, {"data": ["a-string"]}, ["a", "list"], {"data": "x"}):
        client = ScriptedClient(models=models, server_info=SERVER_INFO)
        assert probe(client, warmup_requests=0).run()["model"] == "qwen3-8b"
    given = ScriptedClient(server_info=SERVER_INFO)
    assert probe(given, model="mine", warmup_requests=0).run()["model"] == "mine"
    assert "/v1/models" not in given.gets


def test_native_endpoint_never_asks_for_a_model_name():
    client = ScriptedClient(server_info=SERVER_INFO, endpoint="generate", models=ProbeHTTPError("GET /v1/models: refused"))
    results = probe(client, endpoint="generate", warmup_requests=0).run()
    assert "/v1/models" not in client.gets and results["model"] == "qwen3-8b"
    unnamed = ScriptedClient(server_info=dict(SERVER_INFO, served_model_name=None), endpoint="generate")
    assert probe(unnamed, endpoint="generate", warmup_requests=0).run()["model"] == "/models/qwen3-8b"


def test_unreachable_server_names_the_url():
    client = ScriptedClient(models=ProbeHTTPError("GET /v1/models: connection refused"))
    with pytest.raises(ProbeError) as info:
        probe(client).run()
    assert str(info.value) == "cannot reach the server at http://10.0.0.5:30000: GET /v1/models: connection refused"


def test_server_info_unreachable_is_no_facts():
    client = ScriptedClient(server_info=ProbeHTTPError("GET /server_info: 401"))
    results = probe(client, warmup_requests=0).run()
    assert results["server_version"] is None and results["model"] == "Qwen/Qwen3-8B"


def test_failed_warmup_stops_the_probe_with_its_error():
    client = ScriptedClient(server_info={}, status={0: 503})
    with pytest.raises(ProbeError) as info:
        probe(client).run()
    assert str(info.value) == "the warmup request failed, nothing was measured: HTTP 503"
    with pytest.raises(ProbeError) as info:
        probe(ScriptedClient(server_info={}, empty_warmup=True)).run()
    assert str(info.value) == "the warmup request failed, nothing was measured: no request sent"


def test_per_request_rows_when_asked():
    client = ScriptedClient(server_info={})
    results = probe(client, include_requests=True, concurrency=[1], warmup_requests=0).run()
    row = {"ok": True, "ttft_ms": 125.0, "e2e_ms": 218.75, "tpot_ms": 31.25, "decode_tps": 32.0, "output_tokens": 4,
           "prompt_tokens": 10, "connect_ms": None}
    assert results["levels"][0]["request_details"] == [row, row]


# --- accept length ----------------------------------------------------------------------------------------

def test_accept_length_from_counters_read_around_each_level():
    metrics = [(200, metrics_text(0, None)), (200, metrics_text(3, 10)),          # c1: 10 tokens over 3 steps
               (200, metrics_text(3, 10)), (200, metrics_text(4, 11)),           # c2: 1 token over 1 step
               (200, metrics_text(4, 11)), (200, metrics_text(4, 19))]           # c4: tokens without a step
    client = ScriptedClient(server_info={}, metrics=metrics)
    results = probe(client, concurrency=[1, 2, 4], warmup_requests=0).run()
    assert [lv["accept_length"] for lv in results["levels"]] == [3.3333, 1.0, None]
    assert results["accept_length"] == 3.3333
    assert results["accept_length_source"] == "/metrics counters read before and after each level"
    zero = ScriptedClient(server_info={}, metrics=[(200, metrics_text(5, 20)), (200, metrics_text(6, 20))])
    assert probe(zero, concurrency=[1], warmup_requests=0).run()["levels"][0]["accept_length"] is None
    # a server that counts verify steps but not generated tokens gives no accept length
    steps_only = ScriptedClient(server_info={}, metrics=[(200, metrics_text(0, None)), (200, metrics_text(3, None))])
    assert probe(steps_only, concurrency=[1], warmup_requests=0).run()["levels"][0]["accept_length"] is None


def test_metrics_text_with_bad_bytes_still_counts():
    body = b"# HELP \xff\xfe odd\n" + metrics_text(1, 2).encode()
    client = ScriptedClient(server_info={}, metrics=[(200, body), (200, metrics_text(2, 5))])
    assert probe(client, concurrency=[1], warmup_requests=0).run()["levels"][0]["accept_length"] == 3.0


@pytest.mark.parametrize("first", [ProbeHTTPError("GET /metrics: refused"), (404, "not found"), (200, "up 1\n")])
def test_a_server_without_spec_metrics_is_asked_once(first):
    client = ScriptedClient(server_info={}, metrics=[first, (200, metrics_text(1, 1)), (200, metrics_text(9, 30))])
    results = probe(client, concurrency=[1, 2], warmup_requests=0).run()
    assert client.gets.count("/metrics") == 1
    assert [lv["accept_length"] for lv in results["levels"]] == [None, None]


def test_gate_level_decides_the_runs_accept_length():
    client = ScriptedClient(server_info={}, endpoint="generate", verify={1: 2, 2: 4})
    results = probe(client, endpoint="generate", gate_concurrency=2, warmup_requests=0).run()
    assert [lv["accept_length"] for lv in results["levels"]] == [2.0, 1.0]
    assert results["accept_length"] == 1.0
    assert results["accept_length_source"] == "per-request meta_info (spec_verify_ct)"
    client = ScriptedClient(server_info={}, endpoint="generate", verify={1: 2, 2: 4})
    assert probe(client, endpoint="generate", gate_concurrency=8, warmup_requests=0).run()["accept_length"] == 2.0


def test_both_sources_are_named_when_both_gave_a_level():
    metrics = [(200, metrics_text(0, 0)), (200, metrics_text(1, 1)), (200, metrics_text(1, 1)), (200, metrics_text(3, 9))]
    client = ScriptedClient(server_info={}, endpoint="generate", verify={1: 2}, metrics=metrics)
    results = probe(client, endpoint="generate", concurrency=[1, 2], warmup_requests=0).run()
    assert [lv["accept_length"] for lv in results["levels"]] == [2.0, 4.0]
    assert results["accept_length_source"] == ("/metrics counters read before and after each level and "
                                               "per-request meta_info (spec_verify_ct)")


def test_server_info_accept_length_is_the_last_resort_and_labelled():
    first = dict(SERVER_INFO, internal_states=[{"avg_spec_accept_length": 2.0}])
    after = dict(SERVER_INFO, internal_states=[{"avg_spec_accept_length": 2.123456}])
    client = ScriptedClient(server_info=[first, after])
    results = probe(client, warmup_requests=0).run()
    assert results["accept_length"] == 2.1235
    assert results["accept_length_source"] == ("/server_info avg_spec_accept_length (cumulative since the server started, "
                                               "not this run alone)")
    assert results["speculative_algorithm"] == "EAGLE" and results["server_tp_size"] == 2
    unchanged = ScriptedClient(server_info=[first, dict(SERVER_INFO, internal_states=[])])
    assert probe(unchanged, warmup_requests=0).run()["accept_length"] == 2.0
    plain = ScriptedClient(server_info=dict(first, speculative_algorithm=None))
    assert probe(plain, warmup_requests=0).run()["accept_length"] is None


# --- ceiling ----------------------------------------------------------------------------------------------

PRECOMPUTED = decode_ceiling(SMALL_CONFIG, gpu="NVIDIA L4", tp=1)


def test_verdict_at_another_concurrency_says_so():
    client = ScriptedClient(server_info={})
    results = probe(client, ceiling=PRECOMPUTED, gate_concurrency=2).run()
    verdict = efficiency_verdict(16.0, PRECOMPUTED)
    assert results["ceiling"] == PRECOMPUTED and results["ceiling_error"] is None
    assert (results["efficiency"], results["efficiency_of_bound"], results["efficiency_concurrency"]) == (
        verdict["efficiency"], verdict["efficiency_of_bound"], 2)
    assert results["verdict"] == verdict["verdict"] + (" (measured at concurrency 2: the expectation and the bound are "
                                                       "batch-1 figures)")
    at_one = probe(ScriptedClient(server_info={}), ceiling=PRECOMPUTED).run()
    assert at_one["verdict"] == efficiency_verdict(32.0, PRECOMPUTED)["verdict"] and at_one["efficiency_concurrency"] == 1


def test_no_measured_speed_is_no_verdict():
    client = ScriptedClient(server_info={}, status={1: 500})
    results = probe(client, ceiling=PRECOMPUTED, concurrency=[2]).run()
    assert results["ceiling"] == PRECOMPUTED and results["verdict"] is None and results["efficiency"] is None


def test_ceiling_errors_are_reported_with_the_config_path(tmp_path):
    missing = tmp_path / "config.json"
    results = probe(ScriptedClient(server_info={}), ceiling={"model_config_path": str(missing), "gpu": "NVIDIA L4"}).run()
    assert results["ceiling"] is None
    assert results["ceiling_error"].startswith("model config %s: " % missing)
    missing.write_text("[1, 2]")
    results = probe(ScriptedClient(server_info={}), ceiling={"model_config_path": str(missing), "gpu": "NVIDIA L4"}).run()
    assert results["ceiling_error"] == "model config %s is not a JSON object" % missing


def test_a_precomputed_ceiling_without_speculation_is_used_as_given():
    assert resolve_ceiling(PRECOMPUTED, {}, 1.0) == PRECOMPUTED
    assert resolve_ceiling(PRECOMPUTED, {}, None) == PRECOMPUTED


def test_model_config_wins_over_the_servers_directory(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(OTHER_CONFIG))
    server = {"model_path": str(tmp_path), "args": {"tp_size": 1}}
    assert resolve_ceiling({"model_config": SMALL_CONFIG, "gpu": "NVIDIA L4"}, server, None) == PRECOMPUTED
    sized = resolve_ceiling({"params_b": 0.5, "gpu": "NVIDIA L4"}, server, None)
    assert sized == decode_ceiling(None, params_b=0.5, gpu="NVIDIA L4", tp=1)


def test_a_hub_model_path_is_not_read_as_a_directory():
    with pytest.raises(CeilingError) as expected:
        decode_ceiling(None, gpu="NVIDIA L4", tp=1)
    with pytest.raises(CeilingError) as info:
        resolve_ceiling({"gpu": "NVIDIA L4"}, {"model_path": "Qwen/Qwen3-8B", "args": {"tp_size": 1}}, None)
    assert str(info.value) == str(expected.value)


def test_tp_comes_from_the_option_then_the_server():
    box = {"params_b": 8, "gpu": "NVIDIA L4", "link": "PHB", "dtype": "bf16", "num_layers": 36, "hidden_size": 4096}
    assert resolve_ceiling(box, {"tp_size": 2}, None) == decode_ceiling(None, tp=2, **box)
    assert resolve_ceiling(dict(box, tp=4), {"tp_size": 2}, None) == decode_ceiling(None, tp=4, **box)
    assert resolve_ceiling(dict(box, tp=4), {"tp_size": None}, None) == decode_ceiling(None, tp=4, **box)


def test_the_options_accept_length_wins_over_the_measured_one():
    box = {"params_b": 8, "gpu": "NVIDIA L4", "dtype": "bf16", "speculative": {"algorithm": "EAGLE", "num_steps": 3}}
    assert resolve_ceiling(dict(box, accept_length=2.0), {}, 3.0) == decode_ceiling(None, accept_length=2.0, **box)
    assert resolve_ceiling(box, {}, 3.0) == decode_ceiling(None, accept_length=3.0, **box)


# --- gates and report -------------------------------------------------------------------------------------

def test_gates_get_the_options_figures():
    first = probe(ScriptedClient(server_info={})).run()
    baseline = {"levels": [dict(lv, ttft_ms=dict(lv["ttft_ms"], p50=lv["ttft_ms"]["p50"] - 0.5),
                                decode_tps=dict(lv["decode_tps"], mean=lv["decode_tps"]["mean"] * 1.03)) for lv in first["levels"]]}
    strict = probe(ScriptedClient(server_info={}), baseline=baseline, baseline_tolerance=0, baseline_ttft_slack_ms=0,
                   min_decode_tps=20, gate_concurrency=2).run()
    assert strict["gates"] == evaluate(strict["levels"], 20, None, 2, baseline, 0.0, 0.0)
    assert strict["gates"]["passed"] is False
    lenient = probe(ScriptedClient(server_info={}), baseline=baseline).run()
    assert lenient["gates"] == evaluate(lenient["levels"], None, None, None, baseline, 5.0, 5.0)
    assert lenient["gates"]["passed"] is True


def test_report_files_are_sorted_json_and_the_markdown(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "run.json.tmp").write_text('{"half": ')     # left by an earlier write that was killed midway
    results = {"b": 1, "a": {"z": None, "y": [1]}, "markdown": "# Probe\n"}
    paths = write_report(results, str(folder / "run.json"))
    assert paths == [str(folder / "run.json"), str(folder / "run.md")]
    assert (folder / "run.json").read_text() == '{\n  "a": {\n    "y": [\n      1\n    ],\n    "z": null\n  },\n  "b": 1\n}\n'
    assert (folder / "run.md").read_text() == "# Probe\n"
    write_report({"b": 2}, str(folder / "run"))
    assert (folder / "run.md").read_text() == ""
    assert sorted(p.name for p in folder.iterdir()) == ["run.json", "run.md"]


def test_an_unwritable_report_path_is_a_probe_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    target = str(blocker / "sub" / "run.json")
    with pytest.raises(ProbeError) as info:
        probe_and_gate({"base_url": "http://10.0.0.5:30000", "concurrency": [1], "requests_per_level": 1, "output_tokens": 2,
                        "warmup_requests": 0, "prompts": ["p"], "report_path": target}, client=ScriptedClient(server_info={}))
    assert str(info.value).startswith("report_path %s: [Errno 20] Not a directory" % target)
