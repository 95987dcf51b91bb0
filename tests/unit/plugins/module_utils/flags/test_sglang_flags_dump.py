# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/dev/flags/dump_flags.py, the maintainer script that regenerates data/sglang_flags/<release>.json."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import lint as sf

ROOT = Path(__file__).resolve().parents[5]
SCRIPT = ROOT / "tools" / "dev" / "flags" / "dump_flags.py"


def load_script():
    spec = importlib.util.spec_from_file_location("dump_flags", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", sorted((ROOT / "data" / "sglang_flags").glob("*.json")), ids=lambda p: p.stem)
def test_script_writes_the_format_of_the_bundled_tables(path):
    """Re-rendering each bundled table gives its exact bytes: the script's output is a drop-in replacement."""
    text = path.read_text(encoding="utf-8")
    assert load_script().to_text(json.loads(text)) == text


def test_compare_lists_added_and_removed_options():
    dump = load_script()
    old = json.loads((ROOT / "data" / "sglang_flags" / "0.5.22.json").read_text(encoding="utf-8"))
    new = json.loads((ROOT / "data" / "sglang_flags" / "0.5.23.json").read_text(encoding="utf-8"))
    report = dump.compare(old, new)
    assert report.startswith("0.5.22 -> 0.5.23: 546 -> 561 options")
    assert "  - --speculative-skip-dp-mlp-sync" in report.splitlines()


FAKE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/plugins.py": "LOADED = []\n\ndef load_plugins():\n    LOADED.append(True)\n",
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/hooks.py": 'MESSAGE = "--warned-flag is deprecated; use --tp-size"\n',
    "sglang/cli/__init__.py": "",
    "sglang/cli/serve.py": textwrap.dedent("""\
        def _extract_model_type_override(argv):
            model_type = argv[0]
            if model_type not in ("auto", "llm", "diffusion"):
                raise SystemExit(2)

        def _normalize_positional_model_path(argv):
            return argv
        """),
    "sglang/srt/server_args.py": textwrap.dedent("""\
        import argparse

        from sglang.srt import plugins


        class DeprecatedAction(argparse.Action):
            def __init__(self, option_strings, dest, nargs=0, **kwargs):
                super().__init__(option_strings, dest, nargs=nargs, **kwargs)

            def __call__(self, parser, namespace, values, option_string=None):
                pass


        def loads(text):
            return text


        def prepare_server_args(argv):
            assert plugins.LOADED, "plugins are loaded first, as launch_server does"
            parser = argparse.ArgumentParser(prog="sglang serve")
            parser.add_argument("--model-path", "--model", required=True)
            parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
            parser.add_argument("--language-only", action="store_true")
            parser.add_argument("--attention-backend", choices=["triton", "fa3"])
            parser.add_argument("--kinds", choices={"b", "a"}, nargs="+")
            parser.add_argument("--sampling-params", type=loads)
            parser.add_argument("--old-flag", action=DeprecatedAction)
            parser.add_argument("--noted", action="store_true", help="[Deprecated] use --language-only")
            parser.add_argument("--warned-flag", type=int)
            parser.add_argument("--fused", action=argparse.BooleanOptionalAction)
            parser.add_argument("--ratio", type=float, default=float("nan"))
            parser.add_argument("--config")
            return parser.parse_args(argv)
        """),
    "sglang-0.5.99.dist-info/METADATA": "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.99\n",
}


def test_dump_from_an_installed_sglang(tmp_path):
    site = tmp_path / "site"
    for name, text in FAKE.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out_dir = tmp_path / "tables"
    out_dir.mkdir()
    run = subprocess.run([sys.executable, str(SCRIPT), str(out_dir)], env={"PYTHONPATH": str(site)},
                         capture_output=True, text=True, check=False, timeout=120)
    assert run.returncode == 0, run.stderr
    written = out_dir / "0.5.99.json"
    assert "0.5.99: 13 actions -> " in run.stderr
    table = json.loads(written.read_text())
    assert list(table) == ["sglang_version", "prog", "allow_abbrev", "serve_only", "actions"]
    assert table["prog"] == "sglang serve" and table["allow_abbrev"] is True
    rows = {row["opts"][0]: row for row in table["actions"]}
    assert list(rows) == sorted(rows)
    assert rows["--tp-size"] == {"opts": ["--tp-size", "--tensor-parallel-size"], "dest": "tp_size", "default": 1,
                                 "type": "int", "choices": None, "nargs": None, "action": "_StoreAction",
                                 "required": False, "deprecated": False}
    assert rows["--model-path"]["required"] is True
    assert rows["--kinds"]["choices"] == ["a", "b"]  # a set is sorted
    assert rows["--sampling-params"]["type"] == "loads"
    assert rows["--ratio"]["default"] == "nan"  # JSON cannot hold NaN: its repr
    assert rows["--old-flag"]["deprecated"] and rows["--old-flag"]["action"] == "DeprecatedAction"
    assert rows["--noted"]["deprecated"] and rows["--warned-flag"]["deprecated"]
    assert not rows["--language-only"]["deprecated"]
    assert rows["--fused"]["action"] == "BooleanOptionalAction"
    assert [row["action"] for row in table["serve_only"]] == ["serve_wrapper", "serve_positional"]
    assert table["serve_only"][0]["choices"] == ["auto", "llm", "diffusion"]

    # The lint reads what the script writes.
    result = sf.lint_server_args({"model_path": "/m", "tp": 2, "old_flag": True, "noted": True}, table, "0.5.99")
    assert sorted(f["code"] for f in result.errors) == ["abbreviation", "config_unsupported"]
    assert [f["code"] for f in result.findings if f["severity"] == "warning"] == ["deprecated_flag"]


def test_dump_needs_sglang(tmp_path):
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "x.json")], env={"PYTHONPATH": str(tmp_path)},
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode != 0 and "No module named 'sglang'" in run.stderr
