# -*- coding: utf-8 -*-
"""converged_state as a module: record, then check - whole chain converged, only the host phases converged (the
server's files changed), or neither - and that a miss removes the record while a host-phase answer hands back the
recorded outputs."""

from __future__ import annotations

import json

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.modules import converged_state


def run(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            converged_state.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out


@pytest.fixture(name="host")
def host_fixture(tmp_path, monkeypatch):
    files = {"tuning": tmp_path / "gpu-tuning.env", "config": tmp_path / "main.yaml"}
    files["tuning"].write_text("NCCL_P2P_LEVEL=PHB\n", encoding="utf-8")
    files["config"].write_text("port: 30000\n", encoding="utf-8")
    monkeypatch.setattr(basic.AnsibleModule, "run_command",
                        lambda self, argv, **kw: (0, "boot-1\n", "") if argv[0] == "cat" else (1, "", "no"))
    record = tmp_path / "converged.json"
    host_items = [{"commands": [["cat", "/proc/sys/kernel/random/boot_id"]]}, {"paths": [str(files["tuning"])]}]
    items = host_items + [{"paths": [str(files["config"])]}]
    return {"files": files, "record": record, "items": items, "host_items": host_items}


def record(capsys, host, **extra):
    args = {"action": "record", "path": str(host["record"]), "fingerprint": "all-1", "host_fingerprint": "host-1",
            "items": host["items"], "host_items": host["host_items"], "outputs": {"gpu_tuning_env": {"A": "1"}}}
    args.update(extra)
    return run(capsys, args)


def check(capsys, host, fingerprint="all-1", host_fingerprint="host-1"):
    return run(capsys, {"path": str(host["record"]), "fingerprint": fingerprint, "host_fingerprint": host_fingerprint})


def test_an_unchanged_host_is_converged_whole(capsys, host):
    assert record(capsys, host)[1]["written"] is True
    code, out = check(capsys, host)
    assert code == 0 and out["converged"] and out["host_converged"] and out["host_drift"] == []
    assert out["outputs"] == {"gpu_tuning_env": {"A": "1"}} and out["changed"] is False


def test_new_server_inputs_leave_the_host_phases_converged_and_remove_the_record(capsys, host):
    record(capsys, host)
    host["files"]["config"].write_text("port: 30001\n", encoding="utf-8")
    code, out = check(capsys, host, fingerprint="all-2")
    assert code == 0 and not out["converged"] and out["host_converged"]
    assert out["drift"] == ["the run's inputs changed (variables or the collection's code)",
                            "paths:%s changed" % host["files"]["config"]]
    assert out["outputs"] == {"gpu_tuning_env": {"A": "1"}}
    assert not host["record"].exists()  # a chain that fails half-way leaves no record


def test_host_phases_that_drifted_run_again(capsys, host):
    record(capsys, host)
    host["files"]["tuning"].write_text("NCCL_P2P_DISABLE=1\n", encoding="utf-8")
    _code, out = check(capsys, host)
    assert not out["converged"] and not out["host_converged"] and out["outputs"] == {}
    assert out["host_drift"] == ["paths:%s changed" % host["files"]["tuning"]]


def test_without_a_host_fingerprint_there_is_no_host_answer(capsys, host):
    record(capsys, host)
    _code, out = check(capsys, host, fingerprint="all-2", host_fingerprint="")
    assert not out["converged"] and not out["host_converged"] and out["host_drift"] == [] and out["outputs"] == {}


def test_host_items_outside_the_items_are_refused(capsys, host):
    code, out = record(capsys, host, host_items=[{"paths": ["/etc/elsewhere"]}])
    assert code == 1 and out["msg"] == "converged_state: host_items must be among items; not there: paths:/etc/elsewhere"
    assert not host["record"].exists()
