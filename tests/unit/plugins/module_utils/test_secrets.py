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


# ---------------------------------------------------------------------------------------------------------
# Exact behaviour, pattern by pattern (make mutation: tests/mutation/modules.yml). Each text below is matched
# by one pattern of the policy only and holds one trigger word only, so a pattern, a trigger or a cut-off
# that stops working fails its own case instead of being hidden by another layer. Expected texts are exact:
# masking too much (the quote, the key name, the next option) fails as surely as masking too little.

from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import (  # noqa: E402 (grouped with its tests)
    MIN_SECRET_LEN, TOKEN_MIN_CHARS, is_secret_name, may_contain_secret, redact_args, redact_value,
    secret_values, split_secret_args)

MASKED = "********"  # the mask, pinned here rather than imported: play output and docs show exactly this


def test_the_mask_and_the_cut_offs_are_the_documented_ones():
    """The mask is eight asterisks; known values from 4 characters, tokens from 16 after their prefix."""
    assert (MASK, MIN_SECRET_LEN, TOKEN_MIN_CHARS) == (MASKED, 4, 16)


@pytest.mark.parametrize("text, expected", [
    # Token shapes: hf_ and sk- with at least 16 characters after the prefix, user:password@ in a URL.
    ("token hf_abcdefghijklmnop used", "token ******** used"),
    ("key sk-abc_def-ghijklmnop used", "key ******** used"),
    ("fetch https://alice:pa55w0rd@mirror.example/m failed", "fetch https://********@mirror.example/m failed"),
    # Python repr / keyword style, quotes kept.
    ("ServerArgs(api_key='k3y v4lue', port=1)", "ServerArgs(api_key='********', port=1)"),
    ('ServerArgs(admin_api_key="k3y")', 'ServerArgs(admin_api_key="********")'),
    # JSON and logged dicts.
    ('{"api_key": "k3y", "port": 1}', '{"api_key": "********", "port": 1}'),
    ("{'admin_api_key':'k3y'}", "{'admin_api_key':'********'}"),
    # Unquoted: env files, YAML, logged dicts; the value ends at a space, a comma, a bracket.
    ("api_key=plainvalue port=1", "api_key=******** port=1"),
    ("api_key: plainvalue", "api_key: ********"),
    ("(admin_api_key=x1, tp=2)", "(admin_api_key=********, tp=2)"),
    # Command lines, quoted and not; the next option is left alone.
    ("--api-key 'two words' --port 1", "--api-key '********' --port 1"),
    ('--admin-api-key="k3y" --port 1', '--admin-api-key="********" --port 1'),
    ("--api-key k3y --port 1", "--api-key ******** --port 1"),
    ("--admin-api-key=k3y", "--admin-api-key=********"),
    # Authorization headers, any case, any value length (shorter than a bare Bearer token).
    ("Authorization: Bearer abc", "Authorization: Bearer ********"),
    ("authorization: bearer abc", "authorization: bearer ********"),
    ("AUTHORIZATION: BEARER abc", "AUTHORIZATION: BEARER ********"),
    ("{'Authorization': 'Bearer abc'}", "{'Authorization': 'Bearer ********'}"),
    # A bare Bearer token of 8 characters or more.
    ("sent Bearer abcdefgh to the gateway", "sent Bearer ******** to the gateway"),
    # Environment style, quoted and not: *_TOKEN, *API_KEY, *_SECRET, *PASSWORD.
    ("HF_TOKEN='abc d' next", "HF_TOKEN='********' next"),
    ("HF_TOKEN=abc next", "HF_TOKEN=******** next"),
    ("OPENAI_API_KEY=abc", "OPENAI_API_KEY=********"),
    ("APP_SECRET=abc", "APP_SECRET=********"),
    ("DB_PASSWORD=abc", "DB_PASSWORD=********"),
    ("DB_PASSWORD: abc", "DB_PASSWORD: ********"),
])
def test_each_pattern_masks_exactly_its_value(text, expected):
    """Each secret-looking field or token, on its own, is replaced by the mask and nothing around it is."""
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    # One character short of each cut-off.
    "token hf_abcdefghijklmno used",  # 15 characters after hf_
    "key sk-abcdefghijklmno used",  # 15 characters after sk-
    "sent Bearer abcdefg to the gateway",  # a bare Bearer token of 7 characters
    # Shapes that are not secrets.
    "xhf_abcdefghijklmnopqrst and xsk-abcdefghijklmnopqrst",  # no word boundary before the prefix
    "fetch https://alice@mirror.example/m",  # a user without a password
    # Nulls and empty values in secret fields stay as they are written.
    "api_key=None", "api_key=null", "api_key=~", "api_key=''", "api_key='None'",
    "HF_TOKEN=None", "HF_TOKEN=null", "HF_TOKEN=~", "HF_TOKEN=''",
    # An already masked field.
    "api_key='********'",
])
def test_below_the_cut_offs_and_nulls_are_left_alone(text):
    """Just below each cut-off nothing is masked; nulls, empty values and the mask are not secrets."""
    assert redact(text) == text


@pytest.mark.parametrize("text, expected", [
    ("hf_abcdefghijklmnop", True), ("sk-x", True), ("a@b", True), ("api_key", True), ("--api-key", True),
    ("Bearer", True), ("bearer", True), ("BEARER", True), ("HF_TOKEN", True), ("X_API_KEY", True),
    ("X_SECRET", True), ("PASSWORD", True),
    ("max_total_num_tokens=96512 port=30000", False), ("", False),
])
def test_may_contain_secret_is_true_for_each_trigger_alone(text, expected):
    """The pre-check fires on every trigger word by itself, and not on ordinary log lines."""
    assert may_contain_secret(text) is expected


def test_known_values_from_the_cut_off_length_are_masked_everywhere():
    """A known value of MIN_SECRET_LEN (4) characters is replaced wherever it sits; one of 3 is not."""
    assert redact("key abcd used, abcd again", secrets=["abcd"]) == "key ******** used, ******** again"
    assert redact("key abc used", secrets=["abc"]) == "key abc used"


def test_known_values_are_replaced_longest_first():
    """Whatever order they come in, a value that contains another is replaced whole, once."""
    assert redact("abcdef-longer", secrets=["abcdef", "abcdef-longer"]) == MASKED
    assert redact("abcdef-longer", secrets=["abcdef-longer", "abcdef"]) == MASKED
    assert redact("abcdef-longer", secrets=("abcdef", "abcdef-longer", "abcdef")) == MASKED


@pytest.mark.parametrize("value", [None, 42, ["api_key='k3y'"], {"api_key": "k3y"}, b"api_key=k3y"])
def test_redact_returns_a_non_string_as_it_is(value):
    """Only text is redacted; anything else comes back as the very same object (redact_value walks lists)."""
    assert redact(value, secrets=["k3y-value"]) is value


def test_find_secrets_lists_each_value_once_in_order():
    """Field values first (in pattern order), then tokens; a value found twice or by two layers is listed once."""
    text = ("ServerArgs(api_key='k3y-one', admin_api_key=None) api_key='k3y-one' HF_TOKEN=hf_abcdefghijklmnop "
            "key sk-abcdefghijklmnop key sk-abcdefghijklmnop https://alice:pa55w0rd@mirror.example/")
    assert find_secrets(text) == ["k3y-one", "hf_abcdefghijklmnop", "sk-abcdefghijklmnop", "alice:pa55w0rd"]


@pytest.mark.parametrize("text, expected", [
    ("token hf_abcdefghijklmnop and hf_abcdefghijklmnop", ["hf_abcdefghijklmnop"]),
    ("key sk-abcdefghijklmnop", ["sk-abcdefghijklmnop"]),
    ("api_key='' HF_TOKEN=None api_key='********' api_key=null", []),
    ("--api-key k3y", ["k3y"]),
    ("plain text", []),
])
def test_find_secrets_exact_lists(text, expected):
    """Bare tokens are found, duplicates dropped, and nulls, empty values and the mask are never secrets."""
    assert find_secrets(text) == expected


@pytest.mark.parametrize("name", [
    # Each word, anywhere among the '_'-separated words.
    "ssl_keyfile_password", "db_passwd", "client_secret", "gcp_credential", "google_credentials_path",
    # Each ending.
    "admin_api_key", "gatewayapikey", "hf_token", "huggingface_hub_token", "github_access_token",
    "x_auth_token", "gateway_bearer_token",
    # Exactly 'token'.
    "token",
    # Any case, dashes for underscores, option dashes in front.
    "SSL_KEYFILE_PASSWORD", "HF_TOKEN", "Api_Key", "--ssl-keyfile-password", "--api-key", "-token", "--TOKEN",
    "hugging-face-hub-token", "client-secret",
])
def test_secret_names(name):
    """A name is secret by a word (password, passwd, secret, credential(s)), an ending, or being 'token'."""
    assert is_secret_name(name) is True


@pytest.mark.parametrize("name", [
    "bucket_time_to_first_token", "max_total_num_tokens", "tokenizer_path", "token_budget", "x_token",
    "X-token",  # only leading dashes are option syntax: this is 'x_token', not 'token'
    "passwords_file", "secretary", "api_key_file", "hf_token_path", "port", "", None, 42, ["api_key"],
])
def test_not_secret_names(name):
    """Look-alikes are not secret: a word must be whole, an ending must end the name, 'token' must be all of it."""
    assert is_secret_name(name) is False


def test_redact_value_masks_whole_values_under_secret_names():
    """Under a secret name any non-empty value is masked whole; empty ones are returned as they are."""
    assert redact_value("api_key", "k3y") == MASKED
    assert redact_value("api_key", 12345) == MASKED
    assert redact_value("api_key", ["a", "b"]) == MASKED
    assert [redact_value("api_key", empty) for empty in (None, "", [], {})] == [None, "", [], {}]


def test_redact_value_redacts_strings_lists_and_dicts_under_other_names():
    """Other values keep their shape: strings redacted, list items and dict values walked, numbers kept."""
    assert redact_value("port", "30000") == "30000"
    assert redact_value("port", 30000) == 30000
    assert redact_value("note", "with k3y-value here", secrets=["k3y-value"]) == "with ******** here"
    assert redact_value("cmd", ["--api-key", "k3y", "run k3y-value"], secrets=["k3y-value"]) == \
        ["--api-key", "k3y", "run ********"]
    assert redact_value("env", {"HF_TOKEN": "hf_x", "port": "1", "nested": {"client_secret": "s"}}) == \
        {"HF_TOKEN": MASKED, "port": "1", "nested": {"client_secret": MASKED}}


def test_redact_value_takes_secret_names_as_the_option_is_spelt():
    """secret_names are compared with the name's option dashes dropped and '-' read as '_'."""
    assert redact_value("X-Gateway-Key", "v", secret_names=["X_Gateway_Key"]) == MASKED
    assert redact_value("--my-flag", "v", secret_names=["my_flag"]) == MASKED
    assert redact_value("my-flag", "v", secret_names=["other_flag"]) == "v"


def test_redact_args_exact_copy():
    """A flag dict comes back with secret values masked, secret_names honoured, everything else untouched."""
    args = {"api_key": "k3y", "tp_size": 2, "--extra-token": "t0k", "launch": "serve k3y-value", 5: "five",
            "hf_token": None}
    out = redact_args(args, secrets=["k3y-value"], secret_names=["--extra-token"])
    assert out == {"api_key": MASKED, "tp_size": 2, "--extra-token": MASKED, "launch": "serve ********",
                   5: "five", "hf_token": None}
    assert args["api_key"] == "k3y"  # a copy: the caller's dict is unchanged
    assert redact_args({"model_path": "/m", "api_key": "k3y"}) == {"model_path": "/m", "api_key": MASKED}
    assert redact_args({"x": "a"}, secret_names=[None, 3, "x"]) == {"x": MASKED}  # type: ignore[list-item]


def test_secret_values_exact():
    """Strings and numbers under secret names, in order; bools, None and empty strings are no secrets."""
    args = {"port": 1, "api_key": "k3y", "admin_api_key": 12345, "x_secret": 1.5, "hf_token": True,
            "client_secret": None, "db_password": "", "tokens": ["a"], "credentials": ["c1", 7, False, "", None],
            "my-flag": "mine"}
    assert secret_values(args) == ["k3y", "12345", "1.5", "c1", "7"]
    assert secret_values(args, secret_names=["--my-flag", None]) == ["k3y", "12345", "1.5", "c1", "7", "mine"]
    assert secret_values({"port": 1}) == []


def test_split_secret_args_by_name():
    """Secret-named flags go to the second dict (no_log), all others stay plain; a non-mapping is passed on."""
    args = {"api_key": "k3y", "tp_size": 2, "--ssl-keyfile-password": "p", "speculative_algorithm": "NEXTN"}
    assert split_secret_args(args) == ({"tp_size": 2, "speculative_algorithm": "NEXTN"},
                                       {"api_key": "k3y", "--ssl-keyfile-password": "p"})
    assert split_secret_args({"port": None, "hf_token": None}) == ({"port": None}, {"hf_token": None})
    assert split_secret_args(["api_key"]) == (["api_key"], {})
    assert split_secret_args(None) == (None, {})
