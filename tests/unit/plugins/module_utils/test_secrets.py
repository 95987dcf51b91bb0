# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# Apache License 2.0 (see galaxy.yml)
"""Tests for the redaction helper: every secret shape SGLang and its neighbours print is masked, nothing else."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import MASK, find_secrets, redact

KEY = "sk-gpufleet-3f9a8c2e7b1d4a6f0c5e"


@pytest.mark.parametrize("text, secret", [
    # SGLang's startup line prints ServerArgs as a Python repr (docs/reference/sglang.md#secrets-sglang-prints).
    (f"[2026-11-30 09:02:01] server_args=ServerArgs(model_path='/m', api_key='{KEY}', port=30000)", KEY),
    ("server_args=ServerArgs(admin_api_key=\"adm-77aa55cc99ee\", tp_size=2)", "adm-77aa55cc99ee"),
    # /server_info is JSON.
    ('{"api_key":"s3cr3t-value-1","port":30000}', "s3cr3t-value-1"),
    ('{"admin_api_key": "s3cr3t-value-2"}', "s3cr3t-value-2"),
    # launch_command and shell history.
    ("python -m sglang.launch_server --model-path /m --api-key s3cr3t-value-3 --port 1", "s3cr3t-value-3"),
    ("sglang serve --admin-api-key=s3cr3t-value-4", "s3cr3t-value-4"),
    ("sglang serve --api-key 's3cr3t value5'", "s3cr3t"),
    # HTTP headers, as a header line and as a logged dict.
    ("Authorization: Bearer s3cr3t-value-6", "s3cr3t-value-6"),
    ("headers={'Authorization': 'Bearer s3cr3t-value-7'}", "s3cr3t-value-7"),
    # Environment files and tokens recognisable by shape.
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345", "hf_abcdefghijklmnopqrstuvwxyz012345"),
    ("export HUGGING_FACE_HUB_TOKEN='s3cr3t-value-8'", "s3cr3t-value-8"),
    ("SGLANG_API_KEY=s3cr3t-value-9", "s3cr3t-value-9"),
    ("downloading with token hf_ABCDEFGHIJKLMNOPQRSTUVWX0123 failed", "hf_ABCDEFGHIJKLMNOPQRSTUVWX0123"),
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz0123 rejected", "sk-proj-abcdefghijklmnopqrstuvwxyz0123"),
])
def test_secret_shapes_are_masked(text, secret):
    """Every secret shape SGLang, uvicorn, shells and env files print is masked."""
    out = redact(text)
    assert secret not in out
    assert MASK in out


@pytest.mark.parametrize("text", [
    "server_args=ServerArgs(model_path='/m', api_key=None, admin_api_key=None)",
    '{"api_key":null}',
    "TOKENIZERS_PARALLELISM=false max_total_num_tokens=96512 speculative_num_draft_tokens=4",
    "[2026-11-30 09:03:22 TP0] max_total_num_tokens=96512, chunked_prefill_size=4096",
    "File \"/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/hf_transformers_utils.py\", line 3",
    "",
])
def test_non_secrets_are_left_alone(text):
    """Nulls and look-alike names (TOKENIZERS_PARALLELISM, max_total_num_tokens) stay as they are."""
    assert redact(text) == text


def test_known_values_are_masked_anywhere():
    """A value the caller knows is masked wherever it appears, not only in fields."""
    text = f"request failed: key {KEY} is not valid (tail {KEY[-6:]})"
    out = redact(text, secrets=[KEY])
    assert KEY not in out
    assert out.count(MASK) == 1


def test_longest_known_value_wins():
    """A key that contains another key is masked whole."""
    out = redact("abcdef-longer and abcdef", secrets=["abcdef", "abcdef-longer"])
    assert out == f"{MASK} and {MASK}"


def test_short_known_values_only_masked_in_fields():
    """A 3-character key is not replaced everywhere (it would wreck the text), but its field still is."""
    out = redact("abc api_key='abc' abcabc", secrets=["abc"])
    assert out == f"abc api_key='{MASK}' abcabc"


def test_redaction_is_idempotent():
    """Redacting redacted text changes nothing."""
    text = f"api_key='{KEY}' --api-key {KEY} Authorization: Bearer {KEY}"
    once = redact(text, [KEY])
    assert redact(once, [KEY]) == once


def test_find_secrets_learns_values_from_fields():
    """Values in secret fields are found so that they can be masked elsewhere; nulls are not secrets."""
    found = find_secrets(f"server_args=ServerArgs(api_key='{KEY}', admin_api_key=None) HF_TOKEN=hf_abcdefghijklmnopqrstuvwx")
    assert KEY in found
    assert "None" not in found
    assert "hf_abcdefghijklmnopqrstuvwx" in found


def test_non_string_secrets_are_ignored():
    """Junk in the secrets list is ignored instead of raising."""
    assert redact("plain text", secrets=[None, 42, ""]) == "plain text"  # type: ignore[list-item]
