# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings: the one record every check of the collection's flag layer returns, and how values are shown in them.

A finding is a dict: ``severity`` (error: SGLang would refuse or crash; warning: accepted but surprising; info),
``code`` (stable identifier), ``flag`` (underscore option name, '' when none), ``message`` (SGLang's own text
where it has one), ``hint`` (what to change) and ``source`` (``lint`` here; ``parser`` for the real parser).

Standard library only: modules ship this file to the target.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import MASK, redact

SEVERITIES = ("error", "warning", "info")


def finding(severity: str, code: str, flag: Optional[str], message: str, hint: str = "",
            source: str = "lint") -> dict:
    """Build one finding (the schema every part of the collection returns)."""
    if severity not in SEVERITIES:
        raise ValueError("severity must be one of %s, not %r" % (", ".join(SEVERITIES), severity))
    return {"severity": severity, "code": code, "flag": flag or "", "message": message, "hint": hint,
            "source": source}


def sort_findings(findings: Iterable[Mapping[str, Any]]) -> list:
    """Errors first, then warnings, then infos; stable within a severity so output is deterministic."""
    rank = {name: index for index, name in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (rank.get(f.get("severity"), 9), f.get("source", ""),
                                           f.get("flag", ""), f.get("code", ""), f.get("message", "")))


def count_findings(findings: Iterable[Mapping[str, Any]]) -> dict:
    """``{'error': n, 'warning': n, 'info': n}``."""
    counts = {name: 0 for name in SEVERITIES}
    for item in findings:
        if item.get("severity") in counts:
            counts[item["severity"]] += 1
    return counts


def display(value: Any, secret: bool = False, limit: int = 60) -> str:
    """A short, printable rendering of a value for messages (argparse quotes with repr too); secrets masked."""
    if secret:
        return repr(MASK)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return "<an integer of about %d digits>" % int(value.bit_length() * 0.30103)
    text = repr(value)
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return redact(text)


def _edit_distance(left: str, right: str) -> int:
    """Levenshtein distance with adjacent transpositions (a typo's usual shapes), for short names."""
    previous2: list = []
    previous = list(range(len(right) + 1))
    for i, lchar in enumerate(left, 1):
        current = [i] + [0] * len(right)
        for j, rchar in enumerate(right, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (lchar != rchar))
            if i > 1 and j > 1 and lchar == right[j - 2] and left[i - 2] == rchar:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def close_matches(word: str, candidates: Iterable[str], limit: int = 2) -> list:
    """Names a typo of ``word`` plausibly meant: the one policy behind every "did you mean".

    Why strict: a far-fetched guess (``gpu_memory_utilization`` -> ``enable_memory_saver``) sends the operator
    the wrong way. Only these count as close: the same name up to case, '-' and '_'; or at most one edit for
    names up to 5 characters and two for longer ones (a transposition is one edit); of those, only the closest.
    """
    folded = word.lower().replace("-", "_")
    exact = [c for c in candidates if c.lower().replace("-", "_") == folded]
    if exact:
        return exact[:limit]
    allowed = 1 if len(folded) <= 5 else 2
    scored = []
    for candidate in candidates:
        other = candidate.lower().replace("-", "_")
        if abs(len(other) - len(folded)) > allowed:
            continue
        distance = _edit_distance(folded, other)
        if distance <= allowed:
            scored.append((distance, candidate))
    if not scored:
        return []
    best = min(distance for distance, dummy in scored)  # a worse guess next to a better one only misleads
    return [candidate for distance, candidate in sorted(scored) if distance == best][:limit]
