"""The stand-in's tokenizer rule and its generated text.

Rule (documented in the README, relied on by tests): a text has one token per
run of word characters and one per other non-space character, i.e. the matches of
``\\w+|[^\\w\\s]``. Chat prompts add a ChatML-like template cost: 4 tokens per
message plus 3 for the assistant header. Generated tokens are whole words from a
fixed vocabulary, each with a leading space, so retokenizing the output with the
same rule gives back exactly the completion token count.
"""

import hashlib
import re
from typing import Any, Dict, List

TOKEN_RE = re.compile(r"\w+|[^\w\s]")
PER_MESSAGE = 4
ASSISTANT_HEADER = 3

VOCAB = (
    "the", "server", "is", "a", "stand", "in", "for", "testing", "and", "rehearsal", "it", "paces",
    "tokens", "from", "profile", "of", "hardware", "model", "decode", "prefill", "cache", "graph",
    "tensor", "parallel", "speculative", "accept", "length", "bandwidth", "memory", "link", "journal",
    "unit", "probe", "launch", "ready", "health", "metrics", "stream", "chunk", "usage",
)


def count_text(text: str) -> int:
    """Tokens in ``text`` under the stand-in's rule."""
    return len(TOKEN_RE.findall(text or ""))


def _content_text(content: Any) -> str:
    """Message content as text: a string, or the text parts of an OpenAI content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def count_chat(messages: List[Dict[str, Any]]) -> int:
    """Prompt tokens of a chat request: contents plus the template's per-message cost."""
    return sum(count_text(_content_text(m.get("content"))) + PER_MESSAGE for m in messages) + ASSISTANT_HEADER


def seed_of(text: str) -> int:
    """A stable seed from a prompt, so the same prompt yields the same output."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=4).digest(), "big")


def word(seed: int, index: int) -> str:
    """The ``index``-th generated token of a request: one vocabulary word with its leading space."""
    return " " + VOCAB[(seed + index * 7) % len(VOCAB)]


def words(seed: int, start: int, count: int) -> str:
    """``count`` generated tokens starting at ``start``, concatenated."""
    return "".join(word(seed, i) for i in range(start, start + count))


def natural_length(seed: int, max_tokens: int) -> int:
    """Where a request without ``ignore_eos`` meets its EOS: between 16 and 256 tokens, stable per prompt."""
    return min(max_tokens, 16 + seed % 241)
