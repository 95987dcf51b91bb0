#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible module sglang_probe: a thin shell around module_utils/probe/runner.py."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: sglang_probe
short_description: Measure an SGLang server's streaming throughput and latency against the hardware ceiling
version_added: 0.1.0
description:
  - Streams requests with exact output lengths (C(ignore_eos), C(stream_options.include_usage)) to an SGLang
    server's OpenAI-compatible or native endpoint, excludes warmup requests, and sweeps concurrency levels.
  - Reports TTFT, ITL, TPOT and E2E latency (mean, p50, p90, p99), per-request decode tokens/s, output and request
    throughput, and the speculative accept length of this run, with the definitions of SGLang's own benchmark
    (C(sglang.benchmark.serving)); percentiles interpolate linearly, as numpy does.
  - Prompts come from a shipped set of realistic coding prompts of three lengths, or from the user.
  - Given O(ceiling), reports the expected batch-1 decode figure of the hardware with its band and the bound no
    server beats (see the P(gpufleet.sglang.decode_ceiling#filter) filter), the efficiency measured / expected and a
    plain verdict. The server's own flags (C(/server_info) - CUDA graphs, custom all-reduce, torch.compile, speculative
    settings) and this run's accept length go into the expectation.
  - Gates (O(min_decode_tps), O(max_ttft_ms), regression against O(baseline)) fail the task with the figures that
    missed; any failed request also fails it. The results are returned either way.
  - Runs on the SGLang host (probing 127.0.0.1) or delegated to the controller. Standard library only.
  - The client reads and timestamps chunks on one thread per in-flight request and parses after each level, so it
    is not the bottleneck (C(benchmarks/probe_capacity.py) measures how many streamed tokens one core parses).
author:
  - gpufleet maintainers (@gpufleet)
options:
  base_url:
    description: Base URL of the SGLang server (node rank 0).
    type: str
    default: http://127.0.0.1:30000
  api_key:
    description:
      - "The server's C(--api-key), sent as C(Authorization: Bearer <key>). Never returned."
    type: str
  model:
    description:
      - Model name sent in OpenAI requests. Default is the first id of C(/v1/models).
    type: str
  endpoint:
    description:
      - V(completions) is C(/v1/completions) (a raw prompt, no chat template), V(chat) is C(/v1/chat/completions),
        V(generate) is SGLang's native C(/generate) (per-request speculative statistics in C(meta_info)).
    type: str
    default: completions
    choices: [completions, chat, generate]
  connection:
    description:
      - V(keep-alive) keeps one connection per in-flight request slot, opened before each level, so TTFT leaves
        the TCP connect out. V(per-request) opens a new connection for every request inside its clock, as
        C(sglang.benchmark.serving) does, so TTFT includes the connect and matches the bench's.
      - Either way the connect time is reported on its own (C(connect_ms) of each level) and the report names the mode.
    type: str
    default: keep-alive
    choices: [keep-alive, per-request]
  concurrency:
    description: Concurrency levels to sweep, in order (requests in flight at once).
    type: list
    elements: int
    default: [1, 4, 16]
  requests_per_level:
    description:
      - Requests measured at each level. Default is two full waves, at least four (max(4, 2 x concurrency)).
    type: int
  output_tokens:
    description: Output tokens per request (exact, C(ignore_eos)). At least 2.
    type: int
    default: 256
  warmup_requests:
    description:
      - Requests sent one at a time before the first level and excluded from every figure
        (up to 64 output tokens each). A warmup that fails stops the probe with its error.
    type: int
    default: 1
  prompt_lengths:
    description: Which lengths of the shipped coding prompts to use (short ~30-60, medium ~150-300, long ~600-1000 tokens).
    type: list
    elements: str
    choices: [short, medium, long]
    default: [short, medium, long]
  prompts:
    description: Your own prompts, used in turn.
    type: list
    elements: str
  prompts_file:
    description:
      - File of prompts on the host where the module runs - JSON (a list of strings or of objects with
        C(prompt)), JSON Lines, or text with prompts separated by lines holding only C(---).
    type: path
  unique_prompts:
    description:
      - Prepend a distinct first line to every request so SGLang's prefix (radix) cache cannot serve a prompt
        twice and TTFT includes the real prefill.
    type: bool
    default: true
  temperature:
    description: Sampling temperature.
    type: float
    default: 0.0
  continuous_usage:
    description:
      - Ask for usage on every chunk (C(stream_options.continuous_usage_stats)), so a chunk that carries several
        tokens (speculative decoding) spreads its gap over them in ITL, as SGLang's benchmark does.
    type: bool
    default: true
  timeout:
    description: Seconds one request may take, and may stay silent.
    type: float
    default: 600.0
  validate_certs:
    description: Verify the server certificate for an https base_url.
    type: bool
    default: true
  min_decode_tps:
    description:
      - Gate - the mean per-request decode tokens/s (1 / TPOT) at the gate level must reach this.
    type: float
  max_ttft_ms:
    description:
      - Gate - the p90 TTFT at the gate level must not exceed this many milliseconds.
    type: float
  gate_concurrency:
    description: The level the gates and the efficiency read. Default is the lowest level of the sweep.
    type: int
  baseline:
    description:
      - Gate - an earlier probe's results (the JSON this module returns or writes with O(report_path)), as a path
        on the host where the module runs or as a dict. At every level in both runs, mean decode tokens/s and
        output throughput may fall, and p50 TTFT may rise, by at most O(baseline_tolerance) percent.
    type: raw
  baseline_tolerance:
    description: Regression tolerance against O(baseline), in percent.
    type: float
    default: 5.0
  baseline_ttft_slack_ms:
    description: Extra milliseconds the p50 TTFT may rise over the baseline on top of the tolerance.
    type: float
    default: 5.0
  ceiling:
    description:
      - The hardware ceiling to compare with. Either the result of the P(gpufleet.sglang.decode_ceiling#filter)
        filter (rescaled to this run's accept length), or its inputs - C(model_config) (a config.json dict) or
        C(model_config_path) (on the host where the module runs) or C(params_b)/C(active_params_b), and C(gpu),
        C(bandwidth_gbs), C(gpu_facts), C(tp), C(link), C(pcie_gen), C(pcie_width), C(p2p), C(dtype),
        C(bytes_per_param), C(accept_length), C(allreduce_latency_us), C(achievable_fraction), C(cuda_graphs),
        C(custom_allreduce), C(torch_compile), C(speculative), C(sustained_fraction), C(nnodes), C(internode_bus_gbs),
        C(internode_latency_us).
      - Without a model, the server's C(model_path)/config.json is read when it is a local directory; TP, CUDA
        graphs, custom all-reduce, torch.compile and the speculative settings default to the server's, and the
        accept length to the one measured.
    type: dict
  report_path:
    description:
      - Write the results as JSON to this path and the Markdown report beside it (C(.md)), on the host where the
        module runs. To collect reports on the controller, see C(playbooks/probe.yml).
    type: path
  include_requests:
    description: Add per-request figures to every level (C(request_details)).
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.sglang.http_client
attributes:
  check_mode:
    support: full
    details: In check mode nothing is sent; the module reports what it would probe.
notes:
  - The module never changes the server and always reports C(changed=false).
  - The speculative accept length comes from per-request C(meta_info) (V(generate)), else from the C(/metrics)
    counters read before and after each level (needs C(--enable-metrics)), else from C(/server_info), whose value
    is cumulative since the server started and is labelled so.
  - C(/server_info) contains the server's API key; the module reads only version, TP size, speculative settings and
    model path from it.
seealso:
  - name: SGLang benchmark definitions
    description: The metric definitions follow C(python -m sglang.benchmark.serving).
    link: https://github.com/sgl-project/sglang/blob/main/python/sglang/benchmark/serving.py
"""

EXAMPLES = r"""
- name: Probe the local server at concurrency 1, 4 and 16
  gpufleet.sglang.sglang_probe:
    base_url: http://127.0.0.1:30000
  register: probe

- name: Gate a launch on decode speed and TTFT, compare with the ceiling of two RTX A6000 over PCIe
  gpufleet.sglang.sglang_probe:
    base_url: "http://127.0.0.1:{{ sglang_port }}"
    api_key: "{{ sglang_api_key }}"
    concurrency: [1]
    min_decode_tps: 25
    max_ttft_ms: 400
    ceiling:
      model_config_path: /srv/models/my-27b/config.json
      gpu: NVIDIA RTX A6000
      tp: 2
      link: PHB
      pcie_gen: 4
      pcie_width: 16

- name: Fail on a regression of more than 3 % against the last good run, and keep this run's report
  gpufleet.sglang.sglang_probe:
    baseline: /var/lib/sglang/probe-baseline.json
    baseline_tolerance: 3
    report_path: /var/lib/sglang/probe-latest.json
"""

RETURN = r"""
base_url:
  description: The server probed.
  returned: success
  type: str
endpoint:
  description: The endpoint used.
  returned: success
  type: str
  sample: completions
connection:
  description: The connection mode used, V(keep-alive) or V(per-request).
  returned: success
  type: str
  sample: keep-alive
model:
  description: The model name sent (or the server's model path).
  returned: success
  type: str
server_version:
  description: The SGLang version from C(/server_info), when it answered.
  returned: success
  type: str
speculative_algorithm:
  description: The server's speculative algorithm, when it has one.
  returned: success
  type: str
levels:
  description:
    - One entry per concurrency level. Latencies in milliseconds, each a dict of C(mean), C(p50), C(p90), C(p99).
  returned: success
  type: list
  elements: dict
  contains:
    concurrency:
      description: Requests in flight at once.
      type: int
    requests:
      description: Requests sent (C(completed) + C(failed)).
      type: int
    completed:
      description: Requests that streamed to the end.
      type: int
    failed:
      description: Requests that failed; C(errors) holds up to five distinct messages.
      type: int
    duration_s:
      description: Wall time from the first send to the last end.
      type: float
    output_tokens:
      description: Output tokens of the completed requests (server-reported).
      type: int
    output_throughput:
      description: Output tokens / duration_s.
      type: float
    request_throughput:
      description: Completed requests / duration_s.
      type: float
    ttft_ms:
      description: Time to the first chunk with text (with V(per-request) connections, the connect included).
      type: dict
    connect_ms:
      description:
        - TCP (and TLS) connect time - per request with V(per-request), once per connection before the level with
          V(keep-alive) - or null.
      type: dict
    itl_ms:
      description: Gaps between text chunks, pooled over requests.
      type: dict
    tpot_ms:
      description: (E2E - TTFT) / (output tokens - 1), per request.
      type: dict
    e2e_ms:
      description: Time to the last line of the stream, per request.
      type: dict
    decode_tps:
      description: Per-request decode tokens/s (1 / TPOT).
      type: dict
    accept_length:
      description: Speculative accept length of this level, or null.
      type: float
  sample:
    - concurrency: 1
      requests: 4
      completed: 4
      failed: 0
      duration_s: 36.9
      output_tokens: 1024
      output_throughput: 27.75
      request_throughput: 0.108
      ttft_ms: {mean: 118.2, p50: 96.4, p90: 190.3, p99: 201.2}
      itl_ms: {mean: 35.7, p50: 35.7, p90: 35.8, p99: 36.1}
      tpot_ms: {mean: 35.71, p50: 35.71, p90: 35.72, p99: 35.72}
      e2e_ms: {mean: 9224.0, p50: 9201.9, p90: 9296.5, p99: 9307.6}
      decode_tps: {mean: 28.0, p50: 28.0, p90: 28.01, p99: 28.01}
      accept_length: null
accept_length:
  description: The run's speculative accept length (the gate level's), or null without speculation.
  returned: success
  type: float
accept_length_source:
  description: Where the accept length came from.
  returned: success
  type: str
ceiling:
  description:
    - The batch-1 decode bound and, in C(expected), the expected figure with its band (see the decode_ceiling filter
      for the fields), at this run's accept length; null without O(ceiling).
  returned: success
  type: dict
ceiling_error:
  description: Why the ceiling could not be computed, or null.
  returned: success
  type: str
efficiency:
  description: Measured mean decode tokens/s at the gate level / the expected tokens/s (null without an expectation).
  returned: success
  type: float
  sample: 0.965
efficiency_of_bound:
  description: Measured mean decode tokens/s at the gate level / the bound's tokens/s.
  returned: success
  type: float
  sample: 0.62
verdict:
  description: A plain sentence on what the figure means against the expectation and the bound, and what would make decode faster.
  returned: success
  type: str
  sample: >-
    96% of the expected 53.4 tok/s (band 60-135%; memory-bandwidth bound 83.6 tok/s): as expected for this
    hardware; more flags will not help much; faster decode needs quantisation, better speculative acceptance or NVLink
gates:
  description: Every gate check (C(gate), C(concurrency), C(metric), C(measured), C(limit), C(passed), C(text)), C(passed), C(missed) and C(message).
  returned: success
  type: dict
markdown:
  description: The report as a Markdown table and notes.
  returned: success
  type: str
report_files:
  description: The JSON and Markdown files written for O(report_path).
  returned: when report_path is set
  type: list
  elements: str
duration_s:
  description: Wall time of the whole probe, warmup included.
  returned: success
  type: float
"""

import copy

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.probe.runner import (
    ARGUMENT_SPEC,
    MUTUALLY_EXCLUSIVE,
    ProbeError,
    probe_and_gate,
)


def summary(results: dict) -> str:
    """One line for the task output: batch-1 decode speed (with the ceiling when known) and peak throughput."""
    levels = results.get("levels") or []
    if not levels:
        return "probe ran no level"
    first = levels[0]
    best = max(levels, key=lambda lv: lv.get("output_throughput") or 0)
    decode = (first.get("decode_tps") or {}).get("mean")
    text = "decode %s tok/s per request at concurrency %s" % ("%.2f" % decode if decode else "n/a", first.get("concurrency"))
    ceiling = results.get("ceiling") or {}
    expected = (ceiling.get("expected") or {}).get("tokens_per_s")
    if results.get("efficiency") is not None and expected:
        text += " (%.0f%% of the expected %.1f tok/s; bound %.1f)" % (results["efficiency"] * 100, expected, ceiling["tokens_per_s"])
    elif results.get("efficiency_of_bound") is not None and ceiling:
        text += " (%.0f%% of the %.1f tok/s bound)" % (results["efficiency_of_bound"] * 100, ceiling["tokens_per_s"])
    text += "; output %.1f tok/s at concurrency %s" % (best.get("output_throughput") or 0, best.get("concurrency"))
    return text


def main() -> None:
    """Run the probe (or report what it would do in check mode) and apply the gates."""
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), mutually_exclusive=MUTUALLY_EXCLUSIVE,
                           supports_check_mode=True)
    params = module.params
    if module.check_mode:
        module.exit_json(changed=False, skipped=True,
                         msg="check mode: would probe %s (%s, %s connections) at concurrency %s" % (
                             params["base_url"], params["endpoint"], params["connection"], ", ".join(str(c) for c in params["concurrency"])))
    try:
        results, failure = probe_and_gate(params)
    except ProbeError as exc:
        module.fail_json(msg="sglang_probe: %s" % exc, base_url=params["base_url"])
    if failure:
        module.fail_json(msg="sglang_probe: %s" % failure, changed=False, **results)
    module.exit_json(changed=False, msg=summary(results), **results)


if __name__ == "__main__":
    main()
