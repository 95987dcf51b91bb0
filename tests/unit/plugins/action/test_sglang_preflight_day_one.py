# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A new SGLang release on day one: no flag table ships for it, so the preflight dumps one on the host.

The SGLang stand-in plays 0.5.24, a release no table of this collection describes, with a parser of its own
(SGLANG_STANDIN_FLAG_TABLE: 0.5.23's options plus ``--day-one-option``). Through ansible-playbook, the action
plugin and the module: the first lint dumps the table from the host's parser, keeps it in the controller-side
``tables_dir``, lints with it (the new option passes, the rules come from 0.5.23 and the report says so), and
writes the config; a later controller-only lint reads the kept table; without it the release is refused.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "data" / "sglang_flags"
STANDIN_SRC = ROOT / "tools" / "standins" / "sglang" / "src"
PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")

pytestmark = pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")


@pytest.fixture(name="standin_venv")
def standin_venv_fixture(tmp_path):
    """A venv whose Python imports the stand-in's source and PyYAML (no network, no pip)."""
    import yaml  # pylint: disable=import-outside-toplevel

    root = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "standin.pth").write_text("%s\n%s\n" % (STANDIN_SRC, Path(yaml.__file__).resolve().parent.parent))
    return root


def test_a_release_without_a_table_is_linted_from_one_dumped_on_the_host(tmp_path, standin_venv, ansible_env):
    table = json.loads((DATA / "0.5.23.json").read_text(encoding="utf-8"))
    table["sglang_version"] = "0.5.24"
    table["actions"].append({"opts": ["--day-one-option"], "dest": "day_one_option", "default": None, "type": "int",
                             "choices": None, "nargs": None, "action": "_StoreAction", "required": False,
                             "deprecated": False})
    parser_table = tmp_path / "standin-0.5.24.json"
    parser_table.write_text(json.dumps(table))
    env = {"SGLANG_STANDIN_RELEASE": "0.5.24", "SGLANG_STANDIN_FLAG_TABLE": str(parser_table)}
    flags = tmp_path / "controller" / "sglang_flags"
    empty = tmp_path / "controller" / "empty"
    dest = tmp_path / "etc" / "main.yaml"
    dest.parent.mkdir()
    results = tmp_path / "results.json"
    args = {"model_path": "Qwen/Qwen2-0.5B", "tp_size": 2, "day_one_option": 3}
    play = tmp_path / "play.yml"
    play.write_text(textwrap.dedent("""\
        - hosts: localhost
          connection: local
          gather_facts: false
          vars:
            day_one_args: %(args)s
          tasks:
            - name: Deploy-time lint on the host (dumps the table)
              gpufleet.sglang.sglang_preflight:
                server_args: "{{ day_one_args }}"
                sglang_version: "0.5.24"
                venv: %(venv)s
                service_env: %(env)s
                tables_dir: %(flags)s
                dest: %(dest)s
              register: on_host
            - name: Controller-only lint later (reads the kept table)
              gpufleet.sglang.sglang_preflight:
                server_args: "{{ day_one_args }}"
                sglang_version: "0.5.24"
                tables_dir: %(flags)s
              register: later
            - name: Controller-only lint without the kept table
              gpufleet.sglang.sglang_preflight:
                server_args: "{{ day_one_args }}"
                sglang_version: "0.5.24"
                tables_dir: %(empty)s
                fail_on: never
              register: without
            - name: Keep the results
              ansible.builtin.copy:
                content: "{{ {'on_host': on_host, 'later': later, 'without': without} | to_json }}"
                dest: %(results)s
                mode: "0600"
        """ % {"args": json.dumps(args), "venv": standin_venv, "env": json.dumps(env), "flags": flags, "empty": empty,
               "dest": dest, "results": results}))
    run = subprocess.run([PLAYBOOK, "-i", "localhost,", str(play)], cwd=tmp_path, env=ansible_env,
                         capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(results.read_text())

    on_host = data["on_host"]
    assert on_host["summary"]["error"] == 0 and on_host["table_version"] == "0.5.24"
    notes = {f["code"]: f["message"] for f in on_host["findings"]}
    assert notes["flag_table_dumped"] == ("the collection ships no flag table for SGLang 0.5.24: it was dumped from "
                                          "the host's own parser (kept as %s)" % (flags / "0.5.24.json"))
    assert "the cross-flag rules applied are those of SGLang 0.5.23" in notes["rules_from_nearest_release"]
    assert on_host["parser"]["rc"] == 0 and on_host["parser"]["sglang_version"] == "0.5.24"
    assert "day-one-option: 3\n" in dest.read_text()
    kept = json.loads((flags / "0.5.24.json").read_text())
    assert kept["sglang_version"] == "0.5.24"
    assert ["--day-one-option"] in [row["opts"] for row in kept["actions"]]
    assert not (DATA / "0.5.24.json").exists()  # never inside the installed collection

    later = data["later"]
    assert later["summary"]["error"] == 0 and later["table_version"] == "0.5.24"
    assert "rules_from_nearest_release" in [f["code"] for f in later["findings"]]
    assert later["config"].count("day-one-option: 3") == 1

    without = data["without"]
    assert [f["code"] for f in without["findings"]] == ["release_unsupported"]
    assert "no flag table for SGLang 0.5.24; the newest one known is 0.5.23" in without["msg"]
