# -*- coding: utf-8 -*-
"""An instance's launch as data: the argument precedence, the preflight's host facts and the record of what runs."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import (
    ServerLaunchError, changed_files, launch_record, preflight_facts, probe_measured, security_exposure, server_args_merge)

BASE = {"host": "127.0.0.1", "port": 30000}


# ---------------------------------------------------------------------------------------------------------------------
# server_args_merge: base < tuning < instance < extra < model_path < served_model_name (unless the instance names it)


def test_each_level_wins_over_the_ones_before():
    merged = server_args_merge(BASE, tuning_args={"port": 1, "disable_custom_all_reduce": True, "tp_size": 1},
                               instance_args={"port": 2, "tp_size": 2, "model_path": "/inventory/model"},
                               extra_args={"port": 3, "enable_torch_compile": True}, model_path="/var/lib/models/qwen",
                               served_model_name="Qwen/Qwen3.6-27B")
    assert merged == {"host": "127.0.0.1", "port": 3, "disable_custom_all_reduce": True, "tp_size": 2,
                      "model_path": "/var/lib/models/qwen", "enable_torch_compile": True, "served_model_name": "Qwen/Qwen3.6-27B"}
    assert list(merged) == ["host", "port", "disable_custom_all_reduce", "tp_size", "model_path", "enable_torch_compile",
                            "served_model_name"]


def test_the_instance_keeps_its_own_served_model_name_but_not_its_model_path():
    merged = server_args_merge(BASE, instance_args={"served_model_name": "mine", "model_path": "/mine"}, model_path="/cache/m",
                               served_model_name="org/m")
    assert merged == {"host": "127.0.0.1", "port": 30000, "served_model_name": "mine", "model_path": "/cache/m"}


def test_the_model_cache_name_wins_over_tuning_and_extra_args():
    merged = server_args_merge(BASE, tuning_args={"served_model_name": "t"}, extra_args={"served_model_name": "e"}, served_model_name="org/m")
    assert merged["served_model_name"] == "org/m"


def test_extra_args_win_over_the_instance_without_the_model_cache():
    assert server_args_merge(BASE, instance_args={"port": 30001, "tp_size": 2}, extra_args={"tp_size": 4}) == {
        "host": "127.0.0.1", "port": 30001, "tp_size": 4}


def test_levels_not_set_are_skipped_and_nothing_is_changed_in_place():
    tuning = {"tp_size": 2}
    assert server_args_merge(BASE) == BASE and server_args_merge(BASE) is not BASE
    assert server_args_merge(BASE, tuning_args=tuning, instance_args=None, extra_args={}) == {"host": "127.0.0.1", "port": 30000, "tp_size": 2}
    assert tuning == {"tp_size": 2} and BASE == {"host": "127.0.0.1", "port": 30000}


def test_the_merge_is_shallow_like_combine():
    merged = server_args_merge(BASE, tuning_args={"json_model_override_args": {"a": 1, "b": 2}}, instance_args={"json_model_override_args": {"a": 3}})
    assert merged["json_model_override_args"] == {"a": 3}


@pytest.mark.parametrize("kwargs,label", [({"tuning_args": ["tp_size"]}, "tuning"), ({"instance_args": "tp_size=2"}, "instance"),
                                          ({"extra_args": 3}, "extra")])
def test_a_level_that_is_not_a_mapping_is_named(kwargs, label):
    with pytest.raises(ServerLaunchError, match="^the %s arguments must be a mapping of SGLang options, not " % label):
        server_args_merge(BASE, **kwargs)


# ---------------------------------------------------------------------------------------------------------------------
# preflight_facts


@pytest.mark.parametrize("gpu_facts,expected", [
    (None, {"service_user": "sglang"}),
    ({}, {"service_user": "sglang"}),
    ({"p2p_read": {}}, {"service_user": "sglang"}),
    ({"p2p_read": None, "nvlink_full_mesh": True}, {"service_user": "sglang"}),
    ({"p2p_read": {"0,1": "OK"}}, {"service_user": "sglang", "gpu_p2p": True, "nvlink": False}),
    ({"p2p_read": {"0,1": "OK", "0,2": "OK"}, "nvlink_full_mesh": True}, {"service_user": "sglang", "gpu_p2p": True, "nvlink": True}),
    ({"p2p_read": {"0,1": "OK", "0,2": "CNS"}, "nvlink_full_mesh": False}, {"service_user": "sglang", "gpu_p2p": False, "nvlink": False}),
    ({"p2p_read": {"0,1": "NS"}, "nvlink_full_mesh": "yes"}, {"service_user": "sglang", "gpu_p2p": False, "nvlink": True}),
    ({"p2p_read": {"0,1": "OK"}, "nvlink_full_mesh": "off"}, {"service_user": "sglang", "gpu_p2p": True, "nvlink": False}),
])
def test_p2p_facts_only_when_p2p_was_measured(gpu_facts, expected):
    assert preflight_facts(gpu_facts, "sglang") == expected


# ---------------------------------------------------------------------------------------------------------------------
# launch_record and its parts

WRITTEN = {"/etc/sglang/main.yaml": True, "/etc/sglang/main.env": False, "/etc/systemd/system/sglang-main.service": True}
PROBE = {"levels": [{"concurrency": 1, "decode_tps": {"mean": 54.1}}], "started_at": "2026-11-30T10:00:00+00:00"}
SECURITY = """  NAME                                                        DESCRIPTION                                     EXPOSURE
✓ PrivateNetwork=                                             Service has no access to the host's network
→ Overall exposure level for sglang-main.service: 1.8 OK :-)
"""


def test_changed_files_outside_check_mode_are_the_launch_s_own():
    launch = {"changed_files": ["/etc/sglang/main.yaml", "/etc/sglang/gpu-tuning.env"]}
    assert changed_files(launch, WRITTEN, False) == ["/etc/sglang/main.yaml", "/etc/sglang/gpu-tuning.env"]


def test_check_mode_names_the_files_that_would_be_written_instead_of_the_placeholder():
    launch = {"changed_files": ["(files that this run would write)"]}
    assert changed_files(launch, WRITTEN, True) == ["/etc/sglang/main.yaml", "/etc/systemd/system/sglang-main.service"]


def test_check_mode_keeps_the_launch_s_files_first_and_each_file_once():
    launch = {"changed_files": ["/etc/sglang/gpu-tuning.env", "/etc/sglang/main.yaml"]}
    assert changed_files(launch, WRITTEN, True) == ["/etc/sglang/gpu-tuning.env", "/etc/sglang/main.yaml",
                                                    "/etc/systemd/system/sglang-main.service"]
    assert changed_files({"changed_files": []}, None, True) == [] and changed_files({}, WRITTEN, False) == []


@pytest.mark.parametrize("launch,expected", [
    ({"probe": PROBE, "last_good_probe": PROBE}, "this run"),
    ({"probe": {}}, "this run"),  # probed, the probe could not measure: still this run's verdict
    ({"last_good_probe": PROBE}, "at the last launch, 2026-11-30T10:00:00+00:00"),
    ({"last_good_probe": {"levels": []}}, "at the last launch, ?"),
    ({}, "never"),
])
def test_probe_measured(launch, expected):
    assert probe_measured(launch) == expected


@pytest.mark.parametrize("stdout,expected", [
    (SECURITY, "1.8"),
    ("→ Overall exposure level for sglang-big.service: 9.6 UNSAFE 😨\n", "9.6"),
    ("→ Overall exposure level for x.service: 10 EXPOSED", "10"),
    ("Failed to parse unit file\n", None),
    ("", None),
    (None, None),
])
def test_security_exposure_is_the_printed_level(stdout, expected):
    assert security_exposure(stdout) == expected


def test_a_restarted_probed_launch_is_recorded_whole():
    launch = {"restarted": True, "changed_files": ["/etc/sglang/main.yaml"], "time_to_ready_s": 4.2, "probe": PROBE,
              "probe_baseline": "none", "ready": True}
    assert launch_record(launch, "sglang-main.service", 30000, "0.5.23", check_mode=False, written=WRITTEN,
                         findings={"error": 0, "warning": 1}, security=SECURITY) == {
        "unit": "sglang-main.service", "port": 30000, "sglang_version": "0.5.23", "restarted": True, "check_mode": False,
        "changed_files": ["/etc/sglang/main.yaml"], "time_to_ready_s": 4.2, "probe": PROBE, "probe_measured": "this run",
        "probe_baseline": "none", "findings": {"error": 0, "warning": 1}, "security_exposure": "1.8"}


def test_an_unchanged_launch_shows_its_last_good_figures():
    record = launch_record({"restarted": False, "changed_files": [], "last_good_probe": PROBE}, "sglang-main.service", 30000, "0.5.23")
    assert record["probe"] is PROBE and record["probe_measured"] == "at the last launch, 2026-11-30T10:00:00+00:00"
    assert record["time_to_ready_s"] is None and record["probe_baseline"] is None
    assert record["findings"] == {} and record["security_exposure"] is None and record["changed_files"] == []


def test_a_check_mode_launch_names_what_would_change_and_nothing_measured():
    record = launch_record({"restarted": True, "changed_files": ["(files that this run would write)"]}, "sglang-main.service",
                           30001, "0.5.23", check_mode=True, written=WRITTEN)
    assert record["check_mode"] is True and record["restarted"] is True and record["port"] == 30001
    assert record["changed_files"] == ["/etc/sglang/main.yaml", "/etc/systemd/system/sglang-main.service"]
    assert record["probe"] is None and record["probe_measured"] == "never"


def test_a_launch_result_that_is_not_a_dict_is_refused():
    with pytest.raises(ServerLaunchError, match="the launch result must be the registered result of sglang_launch, not str"):
        launch_record("ok", "sglang-main.service", 30000, "0.5.23")


# ---------------------------------------------------------------------------------------------------------------------
# Edges the summaries depend on (make mutation)


@pytest.mark.parametrize("value, nvlink", [
    ("on", True), ("ON", True), ("1", True), ("True", True), (1, True), (1.0, True), (True, True),
    (2.0, False), (0.0, False), (0, False), ("2", False), ("no", False), (None, False), ([True], False),
])
def test_nvlink_reads_like_ansibles_bool(value, nvlink):
    """nvlink_full_mesh is read as Ansible's bool filter would: yes/on/1/true in any case, 1 or 1.0; else False."""
    out = preflight_facts({"p2p_read": {"0-1": "OK"}, "nvlink_full_mesh": value}, "sglang")
    assert out == {"service_user": "sglang", "gpu_p2p": True, "nvlink": nvlink}


@pytest.mark.parametrize("level, label", [("base", "base"), ("tuning_args", "tuning"), ("instance_args", "instance"),
                                          ("extra_args", "extra")])
def test_a_level_that_is_no_mapping_is_named(level, label):
    """Each level's error names that level."""
    kwargs = {"base": {}, level: ["tp_size", 2]}
    with pytest.raises(ServerLaunchError) as err:
        server_args_merge(**kwargs)
    assert str(err.value) == "the %s arguments must be a mapping of SGLang options, not list" % label


def test_last_good_probe_that_is_no_mapping():
    """A last good probe of another shape still says it is from the last launch, with an unknown time."""
    assert probe_measured({"last_good_probe": "garbled"}) == "at the last launch, ?"
    assert probe_measured({"last_good_probe": {}}) == "at the last launch, ?"


def test_launch_record_defaults_and_refusal():
    """Without check_mode, written, findings and security: not check mode, no findings, no exposure level."""
    record = launch_record({"restarted": False}, "sglang-main.service", 30000, "0.5.23")
    assert (record["check_mode"], record["findings"], record["security_exposure"], record["changed_files"]) == (
        False, {}, None, [])
    with pytest.raises(ServerLaunchError) as err:
        launch_record(["not", "a", "result"], "u", 1, "v")
    assert str(err.value) == "the launch result must be the registered result of sglang_launch, not list"
