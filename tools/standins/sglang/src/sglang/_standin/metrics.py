"""``/metrics`` in Prometheus text format with SGLang's metric names and labels.

Names and labels follow ``observability/metrics_collector.py``
(docs/reference/sglang.md#metrics): gauges for running/queued requests, token usage and generation
throughput, counters for prompt and generation tokens, histograms for TTFT,
inter-token latency and end-to-end latency, and the speculative gauges.
"""

from typing import Any, Dict, List

from .engine import Histogram, Scheduler, Stats


def _labels(args: Dict[str, Any]) -> str:
    name = str(args.get("served_model_name", "")).replace("\\", "\\\\").replace('"', '\\"')
    return f'model_name="{name}",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"'


def _scalar(lines: List[str], name: str, kind: str, helptext: str, labels: str,  # pylint: disable=too-many-arguments,too-many-positional-arguments
            value: float) -> None:
    lines += [f"# HELP sglang:{name} {helptext}", f"# TYPE sglang:{name} {kind}", f"sglang:{name}{{{labels}}} {float(value)}"]


def _histogram(lines: List[str], name: str, helptext: str, labels: str, hist: Histogram) -> None:
    lines += [f"# HELP sglang:{name} {helptext}", f"# TYPE sglang:{name} histogram"]
    running = 0
    for bound, count in zip(hist.buckets, hist.counts):
        running += count
        lines.append(f'sglang:{name}_bucket{{{labels},le="{bound}"}} {float(running)}')
    lines.append(f'sglang:{name}_bucket{{{labels},le="+Inf"}} {float(hist.count)}')
    lines.append(f"sglang:{name}_count{{{labels}}} {float(hist.count)}")
    lines.append(f"sglang:{name}_sum{{{labels}}} {hist.sum}")


def render_metrics(args: Dict[str, Any], scheduler: Scheduler, stats: Stats, extra: Dict[str, Any]) -> str:
    """The whole exposition text."""
    labels = _labels(args)
    lines: List[str] = []
    usage = scheduler.token_count() / scheduler.max_total_tokens
    hit = stats.cached_tokens / stats.prompt_tokens if stats.prompt_tokens else 0.0
    _scalar(lines, "num_running_reqs", "gauge", "The number of running requests.", labels, scheduler.num_running)
    _scalar(lines, "num_queue_reqs", "gauge", "The number of requests in the waiting queue.", labels, scheduler.num_waiting)
    _scalar(lines, "token_usage", "gauge", "The token usage.", labels, usage)
    _scalar(lines, "gen_throughput", "gauge", "The generation throughput (token/s).", labels, stats.last_gen_throughput)
    _scalar(lines, "cache_hit_rate", "gauge", "The prefix cache hit rate.", labels, hit)
    _scalar(lines, "max_total_num_tokens", "gauge", "Maximum total number of tokens in the KV cache pool.", labels,
            scheduler.max_total_tokens)
    _scalar(lines, "startup_time_seconds", "gauge", "Server startup time in seconds.", labels,
            extra.get("startup_total_s", 0.0))
    if args.get("speculative_algorithm"):
        rate = stats.spec_correct_drafts / stats.spec_proposed_drafts if stats.spec_proposed_drafts else 0.0
        _scalar(lines, "spec_accept_length", "gauge",
                "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
                labels, stats.avg_accept_length())
        _scalar(lines, "spec_accept_rate", "gauge", "Acceptance rate of speculative draft tokens.", labels, rate)
        _scalar(lines, "spec_verify_calls_total", "counter", "Number of speculative verify calls.", labels,
                stats.spec_verify_calls)
    _scalar(lines, "prompt_tokens_total", "counter", "Number of prefill tokens processed.", labels, stats.prompt_tokens)
    _scalar(lines, "generation_tokens_total", "counter", "Number of generation tokens processed.", labels,
            stats.generation_tokens)
    _scalar(lines, "num_requests_total", "counter", "Number of requests processed.", labels, stats.requests)
    _histogram(lines, "time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels, stats.ttft)
    _histogram(lines, "inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels, stats.itl)
    _histogram(lines, "e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", labels,
               stats.e2e)
    return "\n".join(lines) + "\n"
