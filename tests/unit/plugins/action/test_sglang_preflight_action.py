# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sglang_preflight action plugin and playbooks/preflight.yml, end to end through ansible-playbook.

The playbook runs use a throwaway ``ansible_collections/gpufleet/sglang`` link to this checkout, an inventory of
unreachable hosts (the preflight must never connect to them), and a fake SGLang venv for the module path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ansible_collections.gpufleet.sglang.plugins.action import sglang_preflight as action
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import releases
from ansible_collections.gpufleet.sglang.plugins.module_utils import secrets

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "data" / "sglang_flags"
STORY = {k: v for k, v in json.loads((ROOT / "tests" / "unit" / "plugins" / "module_utils" / "data" / "flags"
                                      / "story_relaunch.json").read_text()).items() if not k.startswith("_")}
PLAYBOOK = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")


def test_collection_tables_dir_is_the_bundled_data():
    assert Path(action.collection_tables_dir()) == DATA.resolve()
    assert "0.5.23" in action.available_releases(action.collection_tables_dir())


def test_missing_or_broken_tables_are_release_errors(tmp_path):
    with pytest.raises(releases.ReleaseError):
        action.available_releases(str(tmp_path / "nowhere"))
    (tmp_path / "0.5.23.json").write_text("{not json")
    with pytest.raises(releases.ReleaseError) as info:
        action.load_table(str(tmp_path), "0.5.23")
    assert "dump_flags.py" in info.value.hint


def test_history_is_added_only_for_keys_the_release_lacks():
    tables = action.known_tables(None)
    plain = action.table_with_history(tables, "0.5.23", {"model_path": "/m", "tp_size": 2})
    assert "history" not in plain
    story = action.table_with_history(tables, "0.5.23", {**STORY, 7: "bad key"})
    assert set(story["history"]) == {"--enforce-piecewise-cuda-graph"}


def test_dumped_tables_join_the_bundled_ones_but_never_shadow_them(tmp_path):
    table = json.loads((DATA / "0.5.23.json").read_text())
    path = action.write_table(str(tmp_path / "dumped"), dict(table, sglang_version="0.5.25"))
    assert path == str(tmp_path / "dumped" / "0.5.25.json")
    assert json.loads(Path(path).read_text())["sglang_version"] == "0.5.25"
    action.write_table(str(tmp_path / "dumped"), table)  # a stray copy of a bundled release
    tables = action.known_tables(str(tmp_path / "dumped"))
    assert tables["0.5.25"] == str(tmp_path / "dumped") and tables["0.5.23"] == str(DATA.resolve())


def test_a_tables_dir_inside_the_collection_is_refused():
    assert action.inside_collection(str(DATA)) and action.inside_collection(str(ROOT / "plugins" / "x"))
    assert not action.inside_collection(str(ROOT / "build" / "cache" / "gpufleet.sglang"))
    assert not action.inside_collection("/var/tmp/flags")


# ---------------------------------------------------------------------------------------------------------------------
# End to end

needs_ansible = pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed")


def playbook(env, cwd, *args):
    return subprocess.run([PLAYBOOK] + list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          timeout=300)


@needs_ansible
def test_preflight_playbook_lints_every_host_without_connecting(tmp_path, ansible_env):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {
        "vars": {"ansible_host": "192.0.2.1", "ansible_port": 1},  # TEST-NET: any connection attempt would fail
        "hosts": {
            "story_0_5_12": {"sglang_install_version": "0.5.12", "sglang_server_args": STORY},
            "story_0_5_23": {"sglang_install_version": "0.5.23", "sglang_server_args": STORY},
            "clean": {"sglang_install_version": "0.5.23",
                      "sglang_server_args": {"model_path": "/srv/m", "tp_size": 2, "host": "0.0.0.0",
                                             "api_key": "SECRET-KEY-123456"}},
            "no_version": {"sglang_server_args": {"model_path": "/srv/m"}},
        }}}))
    run = playbook(ansible_env, tmp_path, "-i", str(inventory), str(ROOT / "playbooks" / "preflight.yml"))
    out = run.stdout + run.stderr
    assert run.returncode == 2, out
    assert "UNREACHABLE" not in out and "unreachable=0" in out
    assert "requires at least one encoder urls to be set via --encoder-urls" in out
    assert "SGLang 0.5.23 no longer has --enforce-piecewise-cuda-graph" in out
    assert "cuda_graph_backend_prefill: breakable" in out
    assert "no_version has no sglang_install_version" in out
    assert "SECRET-KEY-123456" not in out
    recap = {line.split()[0]: line for line in out.splitlines() if ": ok=" in line}
    assert "failed=0" in recap["clean"]
    for host in ("story_0_5_12", "story_0_5_23", "no_version"):
        assert "failed=1" in recap[host], recap


FAKE_SERVER_ARGS = textwrap.dedent("""\
    import argparse

    import yaml


    def prepare_server_args(argv):
        index = argv.index("--config")
        with open(argv[index + 1]) as handle:
            data = yaml.safe_load(handle)
        extra = []
        for key, value in data.items():
            if value is True:
                extra.append("--" + key)
            elif value is not False:
                extra += ["--" + key, str(value)]
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path", required=True)
        parser.add_argument("--tp-size", type=int)
        parser.add_argument("--api-key")
        parser.add_argument("--host")
        return parser.parse_args(extra)
    """)


@needs_ansible
def test_module_path_writes_the_config_on_the_target_and_is_idempotent(tmp_path, ansible_env):
    site = tmp_path / "site" / "sglang" / "srt"
    site.mkdir(parents=True)
    (site.parent / "__init__.py").write_text("")
    (site / "__init__.py").write_text("")
    (site / "server_args.py").write_text(FAKE_SERVER_ARGS)
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text('#!/bin/sh\nPYTHONPATH="%s" exec "%s" "$@"\n' % (site.parents[1], sys.executable))
    (venv / "python").chmod(0o755)
    dest = tmp_path / "etc" / "default.yaml"
    dest.parent.mkdir()
    results = tmp_path / "results.json"
    play = tmp_path / "play.yml"
    play.write_text(textwrap.dedent("""\
        - hosts: localhost
          connection: local
          gather_facts: false
          tasks:
            - gpufleet.sglang.sglang_preflight:
                server_args: {model_path: /srv/m, tp_size: 2, host: 0.0.0.0, api_key: SECRET-KEY-123456}
                sglang_version: "0.5.23"
                venv: %(venv)s
                dest: %(dest)s
              register: first
            - gpufleet.sglang.sglang_preflight:
                server_args: {model_path: /srv/m, tp_size: 2, host: 0.0.0.0, api_key: SECRET-KEY-123456}
                sglang_version: "0.5.23"
                venv: %(venv)s
                dest: %(dest)s
              register: second
            - gpufleet.sglang.sglang_preflight:
                server_args: {model_path: /srv/m}
                sglang_version: "0.9.1"
              register: unsupported
              ignore_errors: true
            - ansible.builtin.copy:
                content: "{{ {'first': first, 'second': second, 'unsupported': unsupported} | to_json }}"
                dest: %(results)s
                mode: "0600"
        """ % {"venv": venv.parent, "dest": dest, "results": results}))
    run = playbook(ansible_env, tmp_path, "-i", "localhost,", str(play), "-v")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "SECRET-KEY-123456" not in out
    data = json.loads(results.read_text())
    assert "SECRET-KEY-123456" not in json.dumps(data)
    first, second = data["first"], data["second"]
    assert first["changed"] is True and second["changed"] is False
    assert first["parser"]["ran"] is True and first["parser"]["rc"] == 0
    assert "invocation" not in first  # it would repeat the whole flag table
    assert [f["code"] for f in first["findings"]] == ["resolution_skipped", "model_config_unknown"]
    assert first["summary"] == {"error": 0, "warning": 0, "info": 2} and first["args"]["api_key"] == secrets.MASK
    assert "api-key: SECRET-KEY-123456\n" in dest.read_text()
    assert oct(dest.stat().st_mode & 0o777) == "0o640"
    assert data["unsupported"]["failed"] is True
    assert data["unsupported"]["findings"][0]["code"] == "release_unsupported"
    assert "the newest one known is 0.5.23" in data["unsupported"]["msg"]
