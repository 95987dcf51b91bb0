"""Argument parsing: SGLang's argparse behaviour rebuilt from the flag tables, --config, the serve wrapper."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import logging
import subprocess
import sys

import pytest

from standin_helpers import ENTRY, standin_env
from sglang._standin import flagtable
from sglang.cli.serve import extract_model_type, normalize_positional_model

MODEL = ["--model-path", "/models/m"]


def parse(release, *argv):
    """Parse with the release's parser (no logging set-up, no rules)."""
    return flagtable.build_parser(release).parse_args([*MODEL, *argv])


def parse_error(capsys, release, *argv, model=True):
    """Exit status and stderr of a failing parse."""
    with pytest.raises(SystemExit) as exc:
        flagtable.build_parser(release).parse_args([*(MODEL if model else []), *argv])
    return exc.value.code, capsys.readouterr().err


def test_prefix_abbreviation_is_accepted():
    assert parse("0.5.23", "--tp", "2").tp_size == 2
    assert parse("0.5.23", "--tensor-parallel-size", "4").tp_size == 4


def test_ambiguous_prefix_fails_like_sglang(capsys):
    code, err = parse_error(capsys, "0.5.23", "--cuda-graph-max-bs", "64")
    assert code == 2
    assert ("sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
            "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill") in err


def test_deprecated_alias_still_works_on_0_5_19(caplog):
    with caplog.at_level(logging.WARNING):
        args = parse("0.5.19", "--cuda-graph-max-bs", "64")
    assert args.cuda_graph_max_bs_decode == 64
    assert "'--cuda-graph-max-bs' is deprecated and will be removed in a future release." in caplog.text


@pytest.mark.parametrize("flag", ["--enforce-piecewise-cuda-graph", "--disable-piecewise-cuda-graph",
                                  "--enable-piecewise-cuda-graph"])
def test_removed_piecewise_flags_are_unrecognized_on_0_5_23(capsys, flag):
    code, err = parse_error(capsys, "0.5.23", flag)
    assert code == 2
    assert f"sglang serve: error: unrecognized arguments: {flag}" in err


def test_piecewise_flag_history():
    assert parse("0.5.12", "--enforce-piecewise-cuda-graph").enforce_piecewise_cuda_graph is True
    assert parse("0.5.14", "--enforce-piecewise-cuda-graph").cuda_graph_backend_prefill == "tc_piecewise"
    assert parse("0.5.9", "--enable-piecewise-cuda-graph").enable_piecewise_cuda_graph is True


def test_disable_cuda_graph_deprecation_text(caplog):
    with caplog.at_level(logging.WARNING):
        assert parse("0.5.23", "--disable-cuda-graph").disable_cuda_graph is True
    assert ("'--disable-cuda-graph' is deprecated and will be removed in a future release. "
            "Use '--cuda-graph-backend-{decode,prefill}=disabled' instead.") in caplog.text


def test_model_path_is_required(capsys):
    code, err = parse_error(capsys, "0.5.23", model=False)
    assert code == 2
    assert "sglang serve: error: the following arguments are required: --model-path/--model" in err


def test_0_5_9_has_no_prog_so_argparse_says_sglang(capsys):
    _code, err = parse_error(capsys, "0.5.9", "--no-such-flag")
    assert err.splitlines()[-1] == "sglang: error: unrecognized arguments: --no-such-flag"


def test_type_errors_name_sglang_types(capsys):
    _code, err = parse_error(capsys, "0.5.23", "--tp-size", "two")
    assert "argument --tp-size/--tensor-parallel-size: invalid int value: 'two'" in err
    _code, err = parse_error(capsys, "0.5.23", "--context-length", "lots")
    assert "invalid human_readable_int value: 'lots'" in err


def test_speculative_algorithm_choices_only_on_old_releases(capsys):
    assert parse("0.5.23", "--speculative-algorithm", "FOO").speculative_algorithm == "FOO"
    _code, err = parse_error(capsys, "0.5.10", "--speculative-algorithm", "FOO")
    assert "argument --speculative-algorithm: invalid choice: 'FOO'" in err


def test_value_types():
    args = parse("0.5.23", "--context-length", "32k", "--max-total-tokens", "4Ki", "--no-dllm-fdfo",
                 "--preferred-sampling-params", '{"temperature": 0.5}', "--encoder-urls", "http://a", "http://b")
    assert args.context_length == 32000
    assert args.max_total_tokens == 4096
    assert args.dllm_fdfo is False
    assert args.preferred_sampling_params == {"temperature": 0.5}
    assert args.encoder_urls == ["http://a", "http://b"]


# --- --config -----------------------------------------------------------------------------------------


def merge(release, tmp_path, text, *cli):
    config = tmp_path / "server.yaml"
    config.write_text(text)
    parser = flagtable.build_parser(release)
    argv = flagtable.ConfigArgumentMerger(parser).merge_config_with_args(["--config", str(config), *cli])
    return parser, argv


def test_config_merges_with_cli_winning(tmp_path):
    parser, argv = merge("0.5.23", tmp_path, "model-path: /models/a\nport: 31000\ntp-size: 2\nenable-metrics: true\n"
                         "disable-radix-cache: false\nencoder-urls: [http://e1, http://e2]\n", "--port", "32000")
    args = parser.parse_args(argv)
    assert (args.model_path, args.port, args.tp_size, args.enable_metrics) == ("/models/a", 32000, 2, True)
    assert args.disable_radix_cache is False
    assert args.encoder_urls == ["http://e1", "http://e2"]


def test_config_keys_are_flag_names_so_underscores_fail_like_sglang(tmp_path, capsys):
    """SGLang's merger writes ``--{key}`` verbatim: ``model_path`` becomes ``--model_path``, which argparse rejects."""
    parser, argv = merge("0.5.23", tmp_path, "tp_size: 2\n", "--model-path", "/models/a")
    assert argv == ["--tp_size", "2", "--model-path", "/models/a"]
    with pytest.raises(SystemExit):
        parser.parse_args(argv)
    assert "sglang serve: error: unrecognized arguments: --tp_size 2" in capsys.readouterr().err


def test_config_errors(tmp_path):
    parser = flagtable.build_parser("0.5.23")
    merger = flagtable.ConfigArgumentMerger(parser)
    bad = tmp_path / "server.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match="Config file must be YAML format, got: .json"):
        merger.merge_config_with_args(["--config", str(bad)])
    with pytest.raises(ValueError, match="Unsupported config option 'dllm_fdfo' with action 'BooleanOptionalAction'"):
        merger._convert_config_to_args({"dllm-fdfo": True})  # pylint: disable=protected-access
    with pytest.raises(ValueError, match="Multiple config files specified! Only one allowed."):
        merger.merge_config_with_args(["--config", "a.yaml", "--config", "b.yaml"])


# --- entry points --------------------------------------------------------------------------------------


def test_serve_wrapper_strips_model_type_and_positional_model():
    assert extract_model_type(["--model-type", "llm", "--tp", "2"]) == ("llm", ["--tp", "2"])
    assert extract_model_type(["--model-type=llm"]) == ("llm", [])
    assert normalize_positional_model(["/models/m", "--tp", "2"]) == ["--model-path", "/models/m", "--tp", "2"]


def run_cli(args, module=False, **settings):
    head = [sys.executable, "-m", "sglang.launch_server"] if module else [sys.executable, "-c", ENTRY, "serve"]
    return subprocess.run(head + args, env=standin_env(**settings), capture_output=True, text=True, timeout=30, check=False)


def test_cli_argparse_error_exits_2():
    result = run_cli(["--model-type", "llm", "--model-path", "/m", "--tp-size", "x"])
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == "sglang serve: error: argument --tp-size/--tensor-parallel-size: invalid int value: 'x'"


def test_launch_server_rejects_model_type_and_warns():
    result = run_cli(["--model-type", "llm", "--model-path", "/m"], module=True)
    assert result.returncode == 2
    assert "unrecognized arguments: --model-type llm" in result.stderr
    assert ("UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended "
            "entrypoint.\n  Example: sglang serve --model-path <model> [options]") in result.stderr


def test_launch_server_has_no_warning_on_0_5_9():
    result = run_cli(["--model-path", "/m", "--bogus"], module=True, release="0.5.9")
    assert result.returncode == 2
    assert "UserWarning" not in result.stderr


def test_positional_model_only_from_0_5_18():
    result = run_cli(["--model-type", "llm", "/models/m", "--bogus"], release="0.5.18")
    assert result.stderr.splitlines()[-1] == "sglang serve: error: unrecognized arguments: --bogus"
    result = run_cli(["--model-type", "llm", "/models/m", "--bogus"], release="0.5.14")
    assert "the following arguments are required: --model-path/--model" in result.stderr


def test_help_says_stand_in():
    result = run_cli(["--model-type", "llm", "--help"])
    assert result.returncode == 0
    assert "STAND-IN" in result.stdout and "not an inference server" in result.stdout


def test_preflight_import_path_runs_the_parser():
    code = ("import sys; from sglang.srt.server_args import prepare_server_args as p; "
            "a = p(sys.argv[1:]); a.resolve_once(); a.check_server_args(); print(a.tp_size, a.served_model_name)")
    ok = subprocess.run([sys.executable, "-c", code, "--model-path", "/m", "--tp", "2"], env=standin_env(),
                        capture_output=True, text=True, timeout=30, check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == ["2", "/m"]
    bad = subprocess.run([sys.executable, "-c", code, "--model-path", "/m", "--enforce-piecewise-cuda-graph"],
                         env=standin_env(), capture_output=True, text=True, timeout=30, check=False)
    assert bad.returncode == 2
    assert "sglang serve: error: unrecognized arguments: --enforce-piecewise-cuda-graph" in bad.stderr


def test_validation_runs_inside_prepare_up_to_0_5_18():
    code = "import sys; from sglang.srt.server_args import prepare_server_args as p; p(sys.argv[1:]); print('parsed')"
    argv = ["--model-path", "/m", "--language-only"]
    old = subprocess.run([sys.executable, "-c", code, *argv], env=standin_env(release="0.5.12"),
                         capture_output=True, text=True, timeout=30, check=False)
    assert old.returncode == 1
    assert old.stderr.rstrip().endswith("ValueError: requires at least one encoder urls to be set via --encoder-urls")
    new = subprocess.run([sys.executable, "-c", code, *argv], env=standin_env(release="0.5.23"),
                         capture_output=True, text=True, timeout=30, check=False)
    assert new.returncode == 0 and new.stdout.strip() == "parsed"
