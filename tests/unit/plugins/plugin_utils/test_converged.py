# -*- coding: utf-8 -*-
"""plugin_utils.converged: which variables are inputs, that the fingerprint moves with any input and with the code,
and what a run that restarts nothing reports for each server."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.converged import (
    code_digest, converged_readiness, converged_results, fingerprint, input_names, probe_figures, server_placements)


class LazyVars(dict):
    """Like hostvars[host]: values templated on access, some of which fail."""

    def __getitem__(self, key):
        value = super().__getitem__(key)
        if isinstance(value, Exception):
            raise value
        return value


BASE = {"sglang_server_args": {"tp_size": 2}, "lab_min_decode_tps": 30, "ansible_host": "10.0.0.1",
        "__rollout_started_at": "2026-12-01T10:00:00Z", "inventory_hostname": "h1", "groups": {"all": ["h1"]},
        "sglang_server_results": {"main": {}}, "gpu_tuning_state_items": {"paths": []},
        "rollout_report_dir": "/reports/20261201T100000Z", "gpufleet_sglang_report_root": "/reports"}


def test_input_names_leave_out_ansible_private_magic_outputs_and_state_lists():
    assert input_names(BASE) == ["lab_min_decode_tps", "sglang_server_args"]


def test_the_fingerprint_moves_with_an_input_and_not_with_the_rest():
    first = fingerprint(LazyVars(BASE), "code1")
    assert fingerprint(LazyVars(BASE), "code1") == first
    assert fingerprint(LazyVars(dict(BASE, sglang_server_args={"tp_size": 1})), "code1") != first
    assert fingerprint(LazyVars(dict(BASE, sglang_server_extra_args={"x": 1})), "code1") != first
    assert fingerprint(LazyVars(dict(BASE, __rollout_started_at="later", ansible_host="10.0.0.2",
                                     rollout_report_dir="/reports/later")), "code1") == first
    assert fingerprint(LazyVars(BASE), "code2") != first
    assert fingerprint(LazyVars(BASE), "code1", {"sglang_server_state": "restarted"}) != first


def test_facts_injected_as_variables_are_not_inputs():
    first = fingerprint(LazyVars(dict(BASE, ansible_facts={"gpu_facts": {}}, gpu_facts={"gpu_count": 2})), "c")
    assert first == fingerprint(LazyVars(dict(BASE, ansible_facts={"gpu_facts": {}}, gpu_facts={"gpu_count": 4})), "c")
    assert first != fingerprint(LazyVars(dict(BASE, ansible_facts={}, gpu_facts={"gpu_count": 4})), "c")


def test_a_variable_that_cannot_be_templated_marks_itself():
    broken = LazyVars(dict(BASE, later=KeyError("gpu_tuning_gpu_facts")))
    assert fingerprint(broken, "c") == fingerprint(LazyVars(dict(BASE, later=KeyError("other"))), "c")
    assert fingerprint(broken, "c") != fingerprint(LazyVars(BASE), "c")


def test_code_digest_follows_content_and_names_and_skips_bytecode(tmp_path):
    (tmp_path / "roles" / "r").mkdir(parents=True)
    (tmp_path / "roles" / "r" / "main.yml").write_text("a", encoding="utf-8")
    first = code_digest(str(tmp_path), ("roles",))
    (tmp_path / "roles" / "r" / "__pycache__").mkdir()
    (tmp_path / "roles" / "r" / "__pycache__" / "x.pyc").write_bytes(b"1")
    (tmp_path / "roles" / "r" / "y.pyc").write_bytes(b"1")
    assert code_digest(str(tmp_path), ("roles",)) == first
    (tmp_path / "roles" / "r" / "main.yml").write_text("b", encoding="utf-8")
    assert code_digest(str(tmp_path), ("roles",)) != first
    (tmp_path / "roles" / "r" / "main.yml").write_text("a", encoding="utf-8")
    (tmp_path / "roles" / "r" / "main.yml").rename(tmp_path / "roles" / "r" / "other.yml")
    assert code_digest(str(tmp_path), ("roles",)) != first


PROBE = {"started_at": "2026-12-01T11:58:39+00:00", "model": "m", "verdict": "pass", "markdown": "| table |",
         "levels": [{"concurrency": 1, "decode_tps": 53.2, "request_details": [{"i": 0}]}]}
RESTARTED = {"unit": "sglang-main.service", "port": 30000, "sglang_version": "0.5.23", "restarted": True,
             "check_mode": False, "changed_files": ["/etc/sglang/main.yaml"], "time_to_ready_s": 4.9, "probe": PROBE,
             "probe_measured": "this run", "probe_baseline": {"decode_tps": 50}, "findings": {"info": 1},
             "security_exposure": "1.8"}


def test_a_restarted_record_reads_as_unchanged_with_the_figures_kept_from_that_launch():
    out = converged_results({"main": RESTARTED})["main"]
    assert out["restarted"] is False
    assert out["changed_files"] == []
    assert out["time_to_ready_s"] is None
    assert out["probe_baseline"] is None
    assert out["probe_measured"] == "at the last launch, 2026-12-01T11:58:39+00:00"
    assert out["probe"] == {"started_at": "2026-12-01T11:58:39+00:00", "model": "m", "verdict": "pass",
                            "levels": [{"concurrency": 1, "decode_tps": 53.2}]}
    assert (out["unit"], out["port"], out["findings"], out["security_exposure"]) == ("sglang-main.service", 30000, {"info": 1}, "1.8")


def test_converting_twice_changes_nothing_but_the_check_mode_flag():
    once = converged_results({"main": RESTARTED})
    assert converged_results(once) == once
    assert converged_results(once, check_mode=True)["main"]["check_mode"] is True


def test_a_launch_without_figures_stays_never_measured():
    out = converged_results({"main": dict(RESTARTED, probe=None, probe_measured="this run")})["main"]
    assert (out["probe"], out["probe_measured"]) == (None, "never")
    kept = converged_results({"main": dict(RESTARTED, probe={"levels": []}, probe_measured="at the last launch, t")})["main"]
    assert kept["probe_measured"] == "at the last launch, t"
    assert converged_results(None) == {}
    assert converged_results({"bad": "x"}) == {}


def test_probe_figures_needs_levels():
    assert probe_figures({"levels": []}) is None
    assert probe_figures("x") is None


def test_readiness_by_release():
    assert converged_readiness(RESTARTED) == {"unit": "sglang-main.service", "port": 30000, "path": "/ready", "timeout": 2.0}
    old = converged_readiness(dict(RESTARTED, sglang_version="0.5.9"))
    assert (old["path"], old["timeout"]) == ("/health", 25.0)
    assert converged_readiness(dict(RESTARTED, sglang_version="0.5.20"))["path"] == "/ready"
    assert converged_readiness(None) == {}


def test_the_host_part_moves_with_where_servers_run_not_with_other_launch_arguments():
    first = fingerprint(LazyVars(BASE), "c", part="host")
    assert first != fingerprint(LazyVars(BASE), "c")
    # launch arguments that keep the server on its GPUs, the server's other variables and the play's extra
    assert fingerprint(LazyVars(dict(BASE, sglang_server_args={"tp_size": 2, "enable_torch_compile": True},
                                     sglang_server_port=30001)), "c", {"sglang_server_state": "restarted"},
                       part="host") == first
    assert fingerprint(LazyVars(dict(BASE, sglang_server_args={"tensor_parallel_size": 2})), "c", part="host") == first
    # another TP size, first GPU, environment or instance name: the tuning decides again
    for changed in ({"sglang_server_args": {"tp_size": 1}}, {"sglang_server_args": {"tp_size": 2, "base_gpu_id": 2}},
                    {"sglang_server_extra_args": {"tp_size": 1}}, {"sglang_server_env": {"CUDA_VISIBLE_DEVICES": "1,0"}},
                    {"sglang_server_instance": "other"}, {"lab_min_decode_tps": 31}):
        assert fingerprint(LazyVars(dict(BASE, **changed)), "c", part="host") != first, changed
    assert fingerprint(LazyVars(BASE), "c2", part="host") != first


def test_server_placements_follow_instances_extra_args_and_env():
    many = {"sglang_server_instances": [{"name": "a", "args": {"tp-size": 2}, "env": {"X": "1"}},
                                        {"name": "b", "args": {"base_gpu_id": 2}}],
            "sglang_server_extra_args": {"gpu_id_step": 1, "enable_torch_compile": True},
            "sglang_server_env": {"X": "0", "Y": "2"}, "sglang_server_args": {"tp_size": 8}}
    placed = server_placements(LazyVars(many))
    assert [p["name"] for p in placed] == ["a", "b"]
    assert placed[0]["placement"] == {"tp_size": 2, "pp_size": 1, "dp_size": 1, "nnodes": 1, "base_gpu_id": 0,
                                      "gpu_id_step": 1, "enable_dp_attention": False}
    assert placed[1]["placement"]["base_gpu_id"] == 2 and placed[1]["placement"]["tp_size"] == 1
    assert placed[0]["env"] == {"X": "1", "Y": "2"} and placed[1]["env"] == {"X": "0", "Y": "2"}
    assert server_placements(LazyVars({"sglang_server_args": {"tp_size": 4}}))[0]["name"] == "main"
    assert server_placements(LazyVars({})) == []
    odd = {"sglang_server_instances": "not a list"}
    assert server_placements(LazyVars(odd)) == odd
    assert server_placements(LazyVars({"sglang_server_args": ["x"]})) == {"sglang_server_args": ["x"]}


def test_a_fingerprint_of_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="part must be one of all, host, not 'server'"):
        fingerprint(LazyVars(BASE), "c", part="server")


def test_readiness_reads_a_release_by_its_leading_digits():
    assert converged_readiness(dict(RESTARTED, sglang_version="0.5.2rc1"))["path"] == "/health"  # not 0.5.21
    assert converged_readiness(dict(RESTARTED, sglang_version="0.5.20rc1"))["path"] == "/ready"
    assert converged_readiness(dict(RESTARTED, sglang_version="0.5.19.post1"))["path"] == "/health"
