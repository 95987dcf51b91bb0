"""What differs between the SGLang releases the stand-in plays (docs/reference/sglang.md#version-matrix).

Flag recognition comes from the flag tables; this module holds the behaviour that
a flag table cannot show: where validation runs, which log line formats a release
prints, which endpoints exist. Each predicate names the release where the change
landed, so adding a release means reading this file top to bottom once.
"""

from .settings import version_key


def at_least(release: str, minimum: str) -> bool:
    """True when ``release`` is ``minimum`` or newer."""
    return version_key(release) >= version_key(minimum)


def warns_on_launch_server(release: str) -> bool:
    """``python -m sglang.launch_server`` prints a UserWarning since 0.5.10."""
    return at_least(release, "0.5.10")


def validates_in_prepare(release: str) -> bool:
    """Up to 0.5.18 ``ServerArgs.__post_init__`` resolved and checked inside ``prepare_server_args``."""
    return not at_least(release, "0.5.19")


def has_ready_endpoint(release: str) -> bool:
    """``GET /ready`` exists from 0.5.20."""
    return at_least(release, "0.5.20")


def language_only_needs_encoder_urls(release: str) -> bool:
    """``--language-only`` without ``--encoder-urls`` raises up to 0.5.12, logs an info line later."""
    return not at_least(release, "0.5.13")


def parallel_init_word(release: str) -> str:
    """``Init torch distributed`` through 0.5.21, ``Init parallel`` from 0.5.22."""
    return "Init parallel" if at_least(release, "0.5.22") else "Init torch distributed"


def kv_line_has_dtype(release: str) -> bool:
    """The KV cache line gained ``dtype:`` with the arg_groups rewrite (0.5.20 here; 0.5.10 had none)."""
    return at_least(release, "0.5.20")


def phase_graph_lines(release: str) -> bool:
    """Per-phase ``Capture target decode CUDA graph`` lines since the 0.5.14 cuda-graph-backend flags."""
    return at_least(release, "0.5.14")


def piecewise_graph_default_on(release: str) -> bool:
    """0.5.10-0.5.13 capture a piecewise (prefill) CUDA graph unless a rule disables it."""
    return at_least(release, "0.5.10") and not at_least(release, "0.5.14")


def speculative_builtins(release: str) -> tuple:
    """Speculative algorithm names a release resolves (0.5.23 adds DFLASH/DSPARK/UNO)."""
    base = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
    if at_least(release, "0.5.20"):
        return base + ("DFLASH", "DSPARK", "UNO")
    return base
