"""Resolution and check rules: SGLang's messages and outcomes, rule by rule and against real 0.5.23 runs."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import json

import pytest

from standin_helpers import ROOT
from sglang._standin import flagtable, rules
from sglang._standin.profile import load_profile

TEXT = load_profile("test-fast")
VLM = {**TEXT, "model": {**TEXT["model"], "architecture": "Qwen2VLForConditionalGeneration", "multimodal": True}}
CASES = ROOT / "tests" / "unit" / "plugins" / "module_utils" / "data" / "flags" / "validation_cases_0.5.23.json"


def args_for(release, *argv):
    """Parsed argparse destinations of ``release`` as the dict the rules work on."""
    return dict(vars(flagtable.build_parser(release).parse_args(["--model-path", "/models/m", *argv])))


def run(release, *argv, profile=TEXT):
    """(resolved args, log lines) after resolve and check."""
    args = args_for(release, *argv)
    log = rules.resolve(args, release, profile)
    log += rules.check(args, release)
    return args, [message for _level, message in log]


def fails(release, *argv, profile=TEXT):
    """The exception text as Python's traceback ends it."""
    with pytest.raises((ValueError, AssertionError)) as exc:
        run(release, *argv, profile=profile)
    text = str(exc.value)
    return f"{type(exc.value).__name__}: {text}" if text else type(exc.value).__name__


# --- speculative decoding -------------------------------------------------------------------------------


def test_unknown_speculative_algorithm():
    assert fails("0.5.23", "--speculative-algorithm", "FOO") == "ValueError: Unknown speculative algorithm name: FOO"


def test_nextn_resolves_to_eagle_with_auto_params_and_48_requests():
    args, log = run("0.5.23", "--speculative-algorithm", "nextn")
    assert (args["speculative_algorithm"], args["speculative_num_steps"], args["speculative_eagle_topk"],
            args["speculative_num_draft_tokens"], args["max_running_requests"]) == ("EAGLE", 3, 1, 4, 48)
    assert log[-1] == ("Max running requests is reset to 48 for speculative decoding. You can override this by "
                       "explicitly setting --max-running-requests.")


def test_explicit_max_running_requests_is_kept():
    args, log = run("0.5.23", "--speculative-algorithm", "EAGLE", "--max-running-requests", "8")
    assert args["max_running_requests"] == 8
    assert not any("Max running requests" in line for line in log)


def test_topk_1_adjusts_draft_tokens():
    args, log = run("0.5.23", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8")
    assert args["speculative_num_draft_tokens"] == 4
    assert "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1" in log


def test_topk_without_steps_is_a_bare_assert():
    assert fails("0.5.23", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4") == "AssertionError"


def test_llama_auto_params():
    llama = {**TEXT, "model": {**TEXT["model"], "architecture": "LlamaForCausalLM"}}
    args, _log = run("0.5.23", "--speculative-algorithm", "EAGLE3", profile=llama)
    assert (args["speculative_num_steps"], args["speculative_eagle_topk"], args["speculative_num_draft_tokens"]) == (5, 4, 8)


def test_standalone_with_attention_dp():
    assert fails("0.5.23", "--speculative-algorithm", "STANDALONE", "--tp", "2", "--attn-dp-size", "2") == \
        "ValueError: Currently standalone speculative decoding does not support dp attention."


# --- parallelism ---------------------------------------------------------------------------------------


def test_tp_vs_nnodes():
    assert fails("0.5.23", "--tp-size", "3", "--nnodes", "2") == "AssertionError: tp_size must be divisible by number of nodes"


def test_dp_across_nodes():
    assert fails("0.5.23", "--dp-size", "2", "--nnodes", "2", "--tp-size", "2") == (
        "AssertionError: multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) across nodes")


def test_dp_with_attention_dp():
    assert fails("0.5.23", "--dp-size", "2", "--attn-dp-size", "2", "--tp-size", "2") == (
        "ValueError: --dp-size 2 with --attn-dp-size 2: data-parallel replicas combined with attention data "
        "parallelism are not supported.")


def test_attention_dp_must_divide_tp():
    assert fails("0.5.23", "--tp", "2", "--attn-dp-size", "3") == "AssertionError"


def test_deprecated_dp_attention_is_rewritten():
    args, log = run("0.5.23", "--tp-size", "2", "--dp-size", "2", "--enable-dp-attention")
    assert (args["attn_dp_size"], args["dp_size"], args["chunked_prefill_size"]) == (2, 1, 2048)
    assert "DP attention is enabled. chunked prefill size is adjusted from 4096 to 2048." in log


# --- encoder disaggregation (the story's flag) --------------------------------------------------------


@pytest.mark.parametrize("release", ["0.5.10", "0.5.12"])
def test_language_only_without_urls_raises_on_old_releases(release):
    assert fails(release, "--language-only", profile=VLM) == \
        "ValueError: requires at least one encoder urls to be set via --encoder-urls"


@pytest.mark.parametrize("release", ["0.5.14", "0.5.19", "0.5.23"])
def test_language_only_without_urls_logs_info_later(release):
    _args, log = run(release, "--language-only", profile=VLM)
    assert ("--language-only is set without --encoder-urls. Encoders are expected to register dynamically via the "
            "EncoderBootstrapServer.") in log


def test_language_only_with_urls_is_quiet_on_0_5_12():
    _args, log = run("0.5.12", "--language-only", "--encoder-urls", "http://enc:1", profile=VLM)
    assert not any("encoder" in line.lower() for line in log)


def test_language_only_on_text_model():
    assert fails("0.5.23", "--language-only").startswith(
        "ValueError: Model type Qwen2ForCausalLM is not supported for encoder disaggregation. Supported architectures: ")


def test_encoder_and_language_only():
    assert fails("0.5.23", "--language-only", "--encoder-only", profile=VLM) == \
        "ValueError: Cannot set --encoder-only and --language-only together"


# --- other checks ------------------------------------------------------------------------------------------


def test_served_model_name_with_colon():
    assert fails("0.5.23", "--served-model-name", "a:b") == (
        "AssertionError: served_model_name cannot contain a colon (':') character. The colon is reserved for the "
        "'model:adapter' syntax used in LoRA adapter specification. Invalid value: 'a:b'")


def test_grpc_port_equal_to_port():
    assert fails("0.5.23", "--grpc-port", "30000") == "ValueError: --grpc-port (30000) must differ from --port (30000)"
    run("0.5.23", "--grpc-port", "30001")


def test_chunk_not_page_multiple():
    assert fails("0.5.23", "--chunked-prefill-size", "1000", "--page-size", "64") == \
        "AssertionError: chunked_prefill_size must be divisible by page_size"


def test_two_batch_overlap_needs_attention_dp():
    assert fails("0.5.23", "--enable-two-batch-overlap").startswith(
        "ValueError: When enabling two batch overlap without an EP a2a backend")


def test_mem_fraction_has_no_range_check_and_single_batch_overlap_is_accepted():
    args, _log = run("0.5.23", "--mem-fraction-static", "1.5", "--enable-single-batch-overlap")
    assert args["mem_fraction_static"] == 1.5


def test_defaults_filled_like_sglang():
    args, log = run("0.5.23")
    assert args["served_model_name"] == "/models/m" and args["tokenizer_path"] == "/models/m"
    assert log[0] == "Attention backend not specified. Use flashinfer backend by default."


def test_prefill_graph_off_for_multimodal_and_locked_when_explicit():
    args, _log = run("0.5.23", profile=VLM)
    assert args["_cuda_graph"] == {"decode": "full", "prefill": "disabled"}
    args, _log = run("0.5.23", "--cuda-graph-backend-prefill", "breakable", profile=VLM)
    assert args["_cuda_graph"]["prefill"] == "breakable"
    args, _log = run("0.5.23", "--disable-cuda-graph")
    assert args["_cuda_graph"] == {"decode": "disabled", "prefill": "disabled"}


# --- cross-check against the recorded 0.5.23 runs -------------------------------------------------------

IGNORED_LOG_PARTS = ("Attention backend not specified", "SGLANG_USE_CUDA_IPC_TRANSPORT")
COMPARED = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
            "max_running_requests", "tp_size", "dp_size", "attn_dp_size", "ep_size", "port", "host", "chunked_prefill_size")


def recorded_cases():
    return sorted(json.loads(CASES.read_text()).items())


@pytest.mark.parametrize("name,case", recorded_cases())
def test_recorded_0_5_23_case(name, case):
    argv = [a for a in case["argv"] if a not in ("--device", "cuda")][2:]  # drop --model-path X and --device
    profile = VLM if "vl" in case["argv"][1] else TEXT
    args = args_for("0.5.23", *argv)
    try:
        log = rules.resolve(args, "0.5.23", profile) + rules.check(args, "0.5.23")
    except (ValueError, AssertionError) as exc:
        assert not case["ok"], f"{name}: unexpected {exc!r}"
        assert f"{type(exc).__name__}: {exc}" == case["error"], name
        return
    assert case["ok"], f"{name}: expected {case.get('error')}"
    ours = [message for _level, message in log]
    for line in case["logs"]:
        message = line.split(": ", 1)[1]
        if not any(part in message for part in IGNORED_LOG_PARTS):
            assert message in ours, f"{name}: missing log line {message!r}; ours: {ours}"
    for key in COMPARED:
        assert str(args.get(key)) == case["resolved"][key], f"{name}: {key}"


# --- model-dependent checks (the model's config.json at the model path, as real SGLang reads it) ------------


def model_profile(tmp_path, **config):
    """TEXT with a config.json folder applied, as the stand-in's server does for a real model path."""
    from sglang._standin.profile import model_from_path  # pylint: disable=import-outside-toplevel

    (tmp_path / "config.json").write_text(json.dumps(config))
    return model_from_path(TEXT, str(tmp_path))


def test_context_length_above_the_models_maximum(tmp_path, monkeypatch):
    profile = model_profile(tmp_path, architectures=["Qwen2ForCausalLM"], max_position_embeddings=32768,
                            rope_scaling={"type": "yarn", "factor": 4.0})  # transformers 5: the factor does not count
    assert fails("0.5.23", "--context-length", "40000", profile=profile).startswith(
        "ValueError: Warning: User-specified context_length (40000) is greater than the derived context_length (32768).")
    assert run("0.5.23", "--context-length", "32768", profile=profile)[0]["context_length"] == 32768
    overridden = ("--json-model-override-args", '{"max_position_embeddings": 65536}', "--context-length", "40000")
    assert run("0.5.23", *overridden, profile=profile)[0]["context_length"] == 40000
    monkeypatch.setenv("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
    assert run("0.5.23", "--context-length", "40000", profile=profile)[0]["context_length"] == 40000


def test_json_model_override_args_are_parsed_as_json():
    with pytest.raises(json.JSONDecodeError):
        run("0.5.23", "--json-model-override-args", "{bad")
    with pytest.raises(AttributeError, match="'list' object has no attribute 'items'"):
        run("0.5.23", "--json-model-override-args", "[1, 2]")


def test_encoder_disaggregation_reads_the_architecture_of_the_config(tmp_path):
    text = model_profile(tmp_path, architectures=["LlamaForCausalLM"], max_position_embeddings=8192)
    assert fails("0.5.23", "--encoder-only", profile=text).startswith(
        "ValueError: Model type LlamaForCausalLM is not supported for encoder disaggregation.")
    assert run("0.5.9", "--encoder-only", profile=text)  # 0.5.9 has no architecture check


def test_quantization_against_the_checkpoint(tmp_path):
    awq = model_profile(tmp_path, architectures=["Qwen2ForCausalLM"], quantization_config={"quant_method": "awq"})
    assert fails("0.5.23", "--quantization", "fp8", profile=awq) == (
        "ValueError: Quantization method specified in the model config (awq) does not match the quantization method "
        "specified in the `quantization` argument (fp8).")
    assert run("0.5.23", "--quantization", "awq", profile=awq)


def test_parallel_layout_assertions():
    assert fails("0.5.23", "--tp-size", "4", "--moe-dp-size", "3") == \
        "AssertionError: tp_size must be divisible by moe_dp_size"
    assert fails("0.5.23", "--tp-size", "4", "--attn-cp-size", "3") == \
        "AssertionError: tp_size must be divisible by attn_cp_size"
    assert fails("0.5.23", "--tp-size", "4", "--ep-size", "2", "--moe-runner-backend", "flashinfer_cutlass") == \
        "AssertionError: The expert parallel size must be 1 or the same as the tensor parallel size"
    assert fails("0.5.23", "--retraction-policy", "priority") == \
        "ValueError: --retraction-policy priority requires --enable-priority-scheduling"


def test_removed_prefill_backend_and_unknown_log_level_fail_like_sglang(capsys):
    parser = flagtable.build_parser("0.5.23")
    with pytest.raises(SystemExit):
        parser.parse_args(["--model-path", "/m", "--cuda-graph-backend-prefill", "tc_piecewise"])
    assert "argument --cuda-graph-backend-prefill: tc_piecewise was removed; select breakable, full, or disabled" in \
        capsys.readouterr().err
    from sglang._standin import logs  # pylint: disable=import-outside-toplevel

    with pytest.raises(AttributeError, match="module 'logging' has no attribute 'VERBOSE'"):
        logs.configure_basic("verbose")
