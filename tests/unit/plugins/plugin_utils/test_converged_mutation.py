# -*- coding: utf-8 -*-
"""plugin_utils.converged, each name and folder on its own (make mutation MODULES=converged): every magic variable
and every output of the chain is left out of the inputs by itself, every code folder counts by itself, caches,
hidden folders and bytecode never count (and never hide the files after them), and the release parse of the
readiness check."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils import converged
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import code_digest, converged_results, fingerprint, input_names

# Ansible's magic variables and play-set names (docs: "Special Variables"), written out here, not imported.
NOT_INPUTS = ["groups", "group_names", "hostvars", "inventory_dir", "inventory_file", "inventory_hostname",
              "inventory_hostname_short", "omit", "play_hosts", "playbook_dir", "role_names", "environment", "vars",
              "ansible_play_batch", "ansible_play_hosts", "ansible_play_hosts_all"]
# Facts the roles of the chain set (their outputs).
OUTPUTS = ["nvidia_driver_installed_version", "nvidia_driver_plan", "gpu_tuning_gpu_facts", "gpu_tuning_policy",
           "gpu_tuning_env", "gpu_tuning_server_args", "gpu_tuning_warnings", "gpu_tuning_verify_results",
           "gpu_tuning_verify_result", "sglang_install_venv", "sglang_install_installed_version",
           "model_cache_model_path", "model_cache_served_model_name", "model_cache_env", "sglang_server_results"]


@pytest.mark.parametrize("name", NOT_INPUTS + OUTPUTS)
def test_each_magic_variable_and_output_is_no_input_on_its_own(name):
    assert input_names([name, "lab_min_decode_tps"]) == ["lab_min_decode_tps"]
    assert fingerprint({name: 1}, "code") == fingerprint({}, "code")


def write(root, rel, text="x"):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("folder", ["roles", "playbooks", "plugins", "data", "meta"])
def test_each_code_folder_counts_on_its_own(tmp_path, folder):
    empty = code_digest(str(tmp_path))
    write(tmp_path, "%s/a.yml" % folder)
    first = code_digest(str(tmp_path))
    assert first != empty
    write(tmp_path, "%s/a.yml" % folder, "y")
    assert code_digest(str(tmp_path)) != first


def test_other_folders_caches_hidden_folders_and_bytecode_do_not_count(tmp_path):
    write(tmp_path, "plugins/x.py")
    base = code_digest(str(tmp_path))
    write(tmp_path, "tests/test_x.py")
    write(tmp_path, "plugins/__pycache__/x.cpython-312.pyc")
    write(tmp_path, "plugins/.cache/state")
    write(tmp_path, "plugins/x.pyo")
    write(tmp_path, "plugins/a.pyc")
    assert code_digest(str(tmp_path)) == base


def test_bytecode_never_hides_the_files_after_it(tmp_path):
    write(tmp_path, "plugins/a.pyc")
    write(tmp_path, "plugins/b.py", "1")
    first = code_digest(str(tmp_path))
    write(tmp_path, "plugins/b.py", "2")
    assert code_digest(str(tmp_path)) != first


def test_a_hidden_folder_and_a_cache_count_for_nothing_each_alone(tmp_path):
    write(tmp_path, "roles/r/tasks/main.yml")
    base = code_digest(str(tmp_path))
    write(tmp_path, "roles/r/.git/HEAD")
    assert code_digest(str(tmp_path)) == base
    write(tmp_path, "roles/r/__pycache__/m.pyc")
    write(tmp_path, "roles/r/__pycache__/notes.txt")
    assert code_digest(str(tmp_path)) == base
    write(tmp_path, "roles/r/files.d/x")  # a dot inside a name is no hidden folder
    assert code_digest(str(tmp_path)) != base


def test_a_value_that_is_not_plain_is_fingerprinted_as_its_text():
    class Odd:
        def __str__(self):
            return "odd"

    assert fingerprint({"lab_x": Odd()}, "c") == fingerprint({"lab_x": "odd"}, "c")
    assert fingerprint({"lab_x": None}, "c") != fingerprint({"lab_x": "None"}, "c")


def test_a_variable_that_cannot_be_templated_marks_itself_with_its_error():
    class Broken(dict):
        def __getitem__(self, key):
            if key == "lab_bad":
                raise KeyError(key)
            return super().__getitem__(key)

    assert fingerprint(Broken(lab_bad=1), "c") == fingerprint({"lab_bad": "(cannot be templated: KeyError)"}, "c")


def test_an_unknown_part_is_refused_by_name():
    with pytest.raises(ValueError) as info:
        fingerprint({}, "c", part="server")
    assert str(info.value) == "part must be one of all, host, not 'server'"


def test_extra_counts_in_the_whole_fingerprint():
    assert fingerprint({}, "c", extra={"a": 1}) != fingerprint({}, "c")
    assert fingerprint({}, "c", extra={}) == fingerprint({}, "c", extra=None)


def test_converged_results_defaults_and_shapes():
    out = converged_results({"main": {"probe_measured": None}, "bad": "x", "next": {}})
    assert sorted(out) == ["main", "next"]
    assert out["main"]["check_mode"] is False and out["main"]["restarted"] is False
    assert out["main"]["probe_measured"] is None  # kept as it was: only "this run" is rewritten


@pytest.mark.parametrize("version, parsed", [("0.5.23", (0, 5, 23)), ("0.5", (0, 5, 0)), ("", (0, 0, 0)),
                                             (None, (0, 0, 0)), ("1.x.3.4", (1, 0, 3)),
                                             ("7", (7, 0, 0))])
def test_release_parse(version, parsed):
    assert converged._release(version) == parsed
