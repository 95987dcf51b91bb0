# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every check of SGLang's resolution and check_server_args, per release, and which of them the lint reproduces.

Maintainer tool, run when a release is added. Reads unpacked SGLang wheels (``pip download --no-deps
sglang==<release>`` and unzip: ``<dir>/<release>/sglang/srt/...``), walks ``server_args.py`` (0.5.9-0.5.18:
``__post_init__``'s ``_handle_*`` chain and ``check_server_args``), ``arg_groups/*.py`` (0.5.19+: the hook
pipeline of ``resolve_once`` and ``validation_hook.check_server_args``) and the two ModelConfig checks that
resolution reaches (``_derive_context_length``, ``_verify_quantization``), and lists each ``raise`` and
``assert`` with SGLang's message (plus ``SpeculativeAlgorithm.from_string``, which resolution calls).
``LINT`` below says which lint check reproduces a message; everything else is left to the host check, which
runs SGLang's own code. The output replaces the part of docs/preflight.md between the ``checks:begin`` and
``checks:end`` markers:

    python tools/dev/flags/check_inventory.py <dir-of-unpacked-wheels> [--write docs/preflight.md]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

RELEASES = ("0.5.9", "0.5.10", "0.5.12", "0.5.14", "0.5.18", "0.5.19", "0.5.20", "0.5.22", "0.5.23")
EXCEPTIONS = ("ValueError", "NotImplementedError", "RuntimeError", "TypeError", "AssertionError", "KeyError")
MODEL_CONFIG_FUNCTIONS = ("_derive_context_length", "_verify_quantization")
BEGIN, END = "<!-- checks:begin -->", "<!-- checks:end -->"

# SGLang's message (a regular expression on the text below, "{}" where SGLang formats a value) -> the lint code
# that reproduces it. Value and parser checks (types, choices, removed flags) are argparse's and are not listed.
LINT = [
    (r"requires at least one encoder urls", "language_only_without_encoders"),
    (r"Cannot set --encoder-only and --language-only together", "encoder_and_language_only"),
    (r"Cannot set --encoder-only and --disaggregation-mode", "encoder_only_with_pd"),
    (r"--enable-prefix-mm-cache requires --encoder-only", "prefix_mm_cache_without_encoder_only"),
    (r"is not supported for encoder disaggregation", "encoder_disaggregation_architecture"),
    (r"--language-model-only (cannot be combined|is incompatible)", "language_model_only_conflict"),
    (r"is greater than the derived context_length|To allow overriding this maximum", "context_length_above_model"),
    (r"Quantization method specified in the model config", "quantization_mismatch"),
    (r"When enabling two batch overlap", "two_batch_overlap_without_a2a"),
    (r"megamoe has no two-batch / single-batch overlap", "overlap_with_megamoe"),
    (r"DeepEP v2 MoE has not implemented the TBO/SBO", "overlap_with_deepep_v2"),
    (r"^tp_size must be divisible by number of nodes", "tp_not_divisible_by_nodes"),
    (r"multi-node data-parallel replicas are not supported", "multi_node_dp"),
    (r"data-parallel replicas combined with attention data parallelism", "dp_with_attn_dp"),
    (r"^tp_size must be divisible by attn_cp_size$", "attn_cp_not_dividing_tp"),
    (r"^tp_size must be divisible by moe_dp_size$", "moe_dp_not_dividing_tp"),
    (r"^ep_size \* moe_dp_size must be less than or equal to tp_size$", "ep_moe_dp_exceed_tp"),
    (r"The expert parallel size must be 1 or the same as the tensor parallel size", "ep_size_for_flashinfer_moe"),
    (r"--disable-cuda-graph-padding is incompatible with --enable-torch-compile", "compile_without_graph_padding"),
    (r"chunked_prefill_size must be divisible by page_size", "chunk_not_page_multiple"),
    (r"served_model_name cannot contain a colon", "served_model_name_colon"),
    (r"--grpc-port .* must differ from --port", "grpc_port_equals_port"),
    (r"--retraction-policy priority requires --enable-priority-scheduling", "retraction_priority_without_scheduling"),
    (r"Unknown speculative algorithm name", "speculative_algorithm_unknown"),
    (r"standalone speculative decoding does not support dp attention", "standalone_with_dp_attention"),
    (r"--speculative-draft-sink-size requires --speculative-draft-window-size", "draft_sink_without_window"),
    (r"--speculative-use-rejection-sampling requires --speculative-eagle-topk=1", "rejection_sampling_topk"),
    (r"trtllm_mha backend only supports topk = 1", "speculative_topk_trtllm_mha"),
    (r"tc_piecewise was removed", "invalid_choice"),
]
# Bare asserts the lint reproduces, by the function and the condition SGLang asserts.
LINT_BARE = [
    (r"handle_data_parallelism|_handle_data_parallelism", r"tp_size % .*attn_dp_size|attn_dp", "attn_dp_not_dividing_tp"),
    (r"speculative|eagle", r"speculative_eagle_topk is None and .*speculative_num_draft_tokens is None",
     "speculative_params_incomplete"),
]


class Check(tuple):
    """(file, function, exception, message, condition)."""

    @property
    def where(self) -> str:
        return "%s:%s" % (self[0], self[1])


def _text(node: Optional[ast.AST], source: str) -> str:
    """SGLang's message as text: string parts kept, formatted values shown as {}."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, source) + _text(node.right, source)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _text(node.func.value, source)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _text(node.left, source)
    if isinstance(node, ast.Name):
        return "{%s}" % node.id
    return "{%s}" % (ast.get_source_segment(source, node) or "...")[:40]


def file_checks(path: Path, label: str, only: Iterable[str] = ()) -> List[Check]:
    """The raise/assert statements of one source file, with the function around each."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    found: List[Check] = []
    seen = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if only and function.name not in only:
            continue
        for node in ast.walk(function):
            if id(node) in seen:
                continue
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                name = getattr(func, "id", None) or getattr(func, "attr", None)
                if name in EXCEPTIONS:
                    seen.add(id(node))
                    message = _text(node.exc.args[0], source) if node.exc.args else ""
                    found.append(Check((label, function.name, name, " ".join(message.split()), "")))
            elif isinstance(node, ast.Assert):
                seen.add(id(node))
                condition = " ".join((ast.get_source_segment(source, node.test) or "").split())
                found.append(Check((label, function.name, "AssertionError",
                                    " ".join(_text(node.msg, source).split()), condition)))
    return found


def release_checks(root: Path, release: str) -> List[Check]:
    """Every check of one unpacked release."""
    srt = root / release / "sglang" / "srt"
    checks = file_checks(srt / "server_args.py", "server_args.py")
    for path in sorted((srt / "arg_groups").glob("*.py")) if (srt / "arg_groups").is_dir() else ():
        checks += file_checks(path, "arg_groups/" + path.name)
    model_config = srt / "configs" / "model_config.py"
    if model_config.exists():
        checks += file_checks(model_config, "configs/model_config.py", MODEL_CONFIG_FUNCTIONS)
    spec_info = srt / "speculative" / "spec_info.py"
    if spec_info.exists():  # SpeculativeAlgorithm.from_string, which resolution calls
        checks += file_checks(spec_info, "speculative/spec_info.py", ("from_string",))
    unique, keys = [], set()
    for check in checks:
        if check not in keys:
            keys.add(check)
            unique.append(check)
    return unique


RULES_FILE = Path(__file__).resolve().parents[3] / "plugins" / "module_utils" / "flags" / "rules.py"


def rule_ranges() -> dict:
    """code -> [(since, until)] of the lint rules that report it, read from rules.py's @rule decorators."""
    tree = ast.parse(RULES_FILE.read_text(encoding="utf-8"))
    ranges: dict = {}
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "rule":
                bounds = {k.arg: k.value.value for k in decorator.keywords if isinstance(k.value, ast.Constant)}
                for node in ast.walk(function):
                    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("error", "warning", "info") \
                            and node.args and isinstance(node.args[0], ast.Constant):
                        ranges.setdefault(node.args[0].value, []).append((bounds.get("since"), bounds.get("until")))
    return ranges


def _key(release: Optional[str]) -> Tuple[int, ...]:
    return tuple(int(part) for part in release.split(".")) if release else ()


def _applies(ranges: list, release: str) -> bool:
    return any((since is None or _key(release) >= _key(since)) and (until is None or _key(release) <= _key(until))
               for since, until in ranges)


def lint_code(check: Check, release: str = RELEASES[-1], ranges: Optional[dict] = None) -> str:
    """The lint check reproducing it in that release, or '' (left to the host check)."""
    ranges = rule_ranges() if ranges is None else ranges
    code = ""
    for pattern, candidate in LINT:
        if check[3] and re.search(pattern, check[3]):
            code = candidate
            break
    for function, condition, candidate in LINT_BARE:
        if not code and not check[3] and re.search(function, check[1]) and re.search(condition, check[4]):
            code = candidate
    if code and code in ranges and not _applies(ranges[code], release):
        return ""  # the message matches, but no rule of this release reports it
    return code


def _cell(text: str, limit: int = 110) -> str:
    text = text.replace("|", "\\|")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _shown(check: Check) -> str:
    if check[3]:
        return "%s: %s" % (check[2], _cell(check[3]))
    return "%s (no message): `%s`" % (check[2], _cell(check[4], 90).replace("`", "'"))


def render(root: Path, releases: Iterable[str] = RELEASES) -> str:
    """The markdown of the inventory."""
    per_release = {release: release_checks(root, release) for release in releases}
    ranges = rule_ranges()
    lines = ["| release | checks in resolution and check_server_args | reproduced by the lint | left to the host check |",
             "|---|---|---|---|"]
    for release, checks in per_release.items():
        reproduced = sum(1 for check in checks if lint_code(check, release, ranges))
        lines.append("| %s | %d | %d | %d |" % (release, len(checks), reproduced, len(checks) - reproduced))
    newest = list(per_release)[-1]
    lines += ["", "### Every check of %s" % newest, "",
              "`lint` names the lint check that reproduces SGLang's check; empty means the host check (SGLang's own "
              "code) decides.", "", "| where | SGLang's check | lint |", "|---|---|---|"]

    def code_cell(check: Check, release: str) -> str:
        code = lint_code(check, release, ranges)
        return "`%s`" % code if code else ""

    for check in per_release[newest]:
        lines.append("| `%s` | %s | %s |" % (check.where, _shown(check), code_cell(check, newest)))
    known = {(c[2], c[3], c[4]) for c in per_release[newest]}
    for release in reversed(list(per_release)[:-1]):
        own = [c for c in per_release[release] if (c[2], c[3], c[4]) not in known]
        known |= {(c[2], c[3], c[4]) for c in own}
        lines += ["", "### Checks of %s that no newer release has (%d)" % (release, len(own)), "",
                  "| where | SGLang's check | lint |", "|---|---|---|"]
        lines += ["| `%s` | %s | %s |" % (c.where, _shown(c), code_cell(c, release)) for c in own]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list] = None) -> int:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    cli.add_argument("root", help="folder with <release>/sglang/srt/... of every release")
    cli.add_argument("--write", metavar="DOC", help="replace the inventory between the markers of this file")
    options = cli.parse_args(argv)
    text = render(Path(options.root))
    if not options.write:
        sys.stdout.write(text)
        return 0
    doc = Path(options.write)
    content = doc.read_text(encoding="utf-8")
    if BEGIN not in content or END not in content:
        raise SystemExit("%s has no %s ... %s markers" % (doc, BEGIN, END))
    head, rest = content.split(BEGIN, 1)
    dummy, tail = rest.split(END, 1)
    doc.write_text(head + BEGIN + "\n" + text + END + tail, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
