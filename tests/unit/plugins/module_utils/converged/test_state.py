# -*- coding: utf-8 -*-
"""converged.state: what is observed, and that every kind of drift (a file edited, a mode or owner changed, a
package gone, a unit stopped, a server not ready, new inputs, no record) makes the host not converged."""

from __future__ import annotations

import os

from ansible_collections.gpufleet.sglang.plugins.module_utils.converged import state
from ansible_collections.gpufleet.sglang.plugins.module_utils.converged.state import (
    compare, compare_host, config_host, item_keys, load_record, make_record, merge_items, observe, observe_listing, observe_tree, parse_show,
    problems_now, save_record, unit_files)

SHOW = """LoadState=loaded
ActiveState=active
UnitFileState=enabled
NeedDaemonReload=no
FragmentPath={unit}
EnvironmentFiles={tuning} (ignore_errors=yes) ; {env} (ignore_errors=no)
ExecStart={{ path=/opt/venv/bin/sglang ; argv[]=/opt/venv/bin/sglang serve --model-type llm --config {config} ; ignore_errors=no }}
User=sglang
Group=sglang
WorkingDirectory={state}
"""


class FakeHost:
    """Commands and HTTP as a host answers them; each can be changed between observations."""

    def __init__(self, tmp_path):
        self.root = tmp_path
        self.files = {name: tmp_path / name for name in ("main.yaml", "main.env", "gpu-tuning.env", "sglang-main.service")}
        for path in self.files.values():
            path.write_text("x: 1\n", encoding="utf-8")
        self.files["main.yaml"].write_text("host: 0.0.0.0\nport: 30000\n", encoding="utf-8")
        self.state = tmp_path / "state" / "main"
        self.state.mkdir(parents=True)
        launch = tmp_path / "state" / ".launch" / "main" / "last-good"
        launch.mkdir(parents=True)
        (launch / "manifest.json").write_text("{}", encoding="utf-8")
        self.active = "active"
        self.packages = "ii python3-venv 3.11\nii python3-pip 23.0\n"
        self.status = 200
        self.urls = []

    def show(self):
        return SHOW.format(unit=self.files["sglang-main.service"], tuning=self.files["gpu-tuning.env"],
                           env=self.files["main.env"], config=self.files["main.yaml"], state=self.state) \
            .replace("ActiveState=active", "ActiveState=" + self.active)

    def run(self, argv):
        if argv[:2] == ["systemctl", "show"]:
            return 0, self.show(), ""
        if argv[0] == "dpkg-query":
            return 0, self.packages, ""
        if argv[0] == "getent":
            return 0, "%s:x:999:\n" % argv[2], ""
        if argv[0] == "id":
            return 0, "sglang video\n", ""
        if argv[0] == "missing-tool":
            raise FileNotFoundError(argv[0])
        return 1, "", "unknown"

    def http(self, url, timeout):
        self.urls.append((url, timeout))
        return self.status


ITEMS = {"paths": [], "commands": [["sorted", "dpkg-query", "-W"]], "units": ["sglang-main.service"],
         "http": [{"unit": "sglang-main.service", "port": 30000, "path": "/ready", "timeout": 2}]}


def recorded(host, items=None, host_items=None):
    """The record of a good run; with host_items, a host part (fingerprint "host1") naming them."""
    tuning = {"paths": [str(host.files["gpu-tuning.env"])]}
    items = merge_items(items or ITEMS, tuning)
    host_part = ("host1", merge_items(host_items, tuning)) if host_items is not None else ("", None)
    return make_record("fp1", items, observe(items, host.run, host.http), {"gpu_tuning_env": {"A": "1"}}, *host_part)


def check(host, record, fingerprint="fp1"):
    items = merge_items((record or {}).get("items"))
    return compare(record, fingerprint, observe(items, host.run, host.http))


def test_an_unchanged_host_is_converged(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    assert check(host, record) == []
    # the server's address comes from its --config file: a wildcard is reached on loopback
    assert host.urls[-1] == ("http://127.0.0.1:30000/ready", 2.0)


def test_no_record_or_another_version_is_not_converged(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    assert check(host, None) == ["no record of a converged run"]
    assert check(host, dict(record, version=0)) == ["no record of a converged run"]


def test_new_inputs_are_drift(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    assert check(host, record, fingerprint="fp2") == ["the run's inputs changed (variables or the collection's code)"]


def test_a_file_of_the_unit_edited_by_hand_is_drift(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    host.files["main.env"].write_text("x: 2\n", encoding="utf-8")
    assert check(host, record) == ["units:sglang-main.service changed"]


def test_a_listed_file_whose_mode_changed_is_drift(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    os.chmod(host.files["gpu-tuning.env"], 0o600)
    # listed by gpu_tuning and read by the unit: both see it
    assert check(host, record) == ["paths:%s changed" % host.files["gpu-tuning.env"], "units:sglang-main.service changed"]


def test_a_removed_file_is_drift(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    host.files["gpu-tuning.env"].unlink()
    drift = check(host, record)
    assert "paths:%s changed" % host.files["gpu-tuning.env"] in drift


def test_a_removed_package_is_drift(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    host.packages = "ii python3-venv 3.11\n"
    assert check(host, record) == ["commands:sorted dpkg-query -W changed"]


def test_package_order_does_not_matter_when_sorted(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    host.packages = "ii python3-pip 23.0\nii python3-venv 3.11\n"
    assert check(host, record) == []


def test_a_stopped_server_is_drift_even_with_everything_else_equal(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    host.active = "inactive"
    drift = check(host, record)
    assert "units:sglang-main.service is inactive" in drift
    assert "units:sglang-main.service changed" in drift


def test_a_server_that_does_not_answer_ready_is_drift(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    host.status = 503
    drift = check(host, record)
    assert "http:http://127.0.0.1:30000/ready does not answer 200" in drift


def test_the_launch_records_beside_the_state_folder_count(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host)
    (tmp_path / "state" / ".launch" / "main" / "last-good" / "manifest.json").write_text('{"a": 1}', encoding="utf-8")
    assert check(host, record) == ["units:sglang-main.service changed"]


def test_a_missing_program_is_observed_not_raised(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host, {"commands": [["missing-tool"]]})
    assert check(host, record) == []


def test_problems_now_reads_reload_and_state():
    seen = {"units": {"u": {"props": {"ActiveState": "active", "NeedDaemonReload": "yes"}}}, "http": {"http://x": True}}
    assert problems_now(seen) == ["units:u needs a daemon-reload"]
    seen = {"units": {"u": {"props": {"ActiveState": "failed"}}}, "http": {"http://x": False}}
    assert problems_now(seen) == ["units:u is failed", "http:http://x does not answer 200"]


def test_unit_files_reads_fragment_environment_files_and_config():
    props = parse_show(SHOW.format(unit="/etc/systemd/system/u.service", tuning="/etc/sglang/gpu-tuning.env",
                                   env="/etc/sglang/main.env", config="/etc/sglang/main.yaml", state="/var/lib/sglang/main"))
    assert unit_files(props) == ["/etc/systemd/system/u.service", "/etc/sglang/gpu-tuning.env", "/etc/sglang/main.env",
                                 "/etc/sglang/main.yaml"]
    assert unit_files({}) == []


def test_config_host(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("model_path: /m\nhost: 10.0.0.5\nport: 1\n", encoding="utf-8")
    assert config_host(str(config)) == "10.0.0.5"
    config.write_text("host: '::'\n", encoding="utf-8")
    assert config_host(str(config)) == "127.0.0.1"
    config.write_text("host: fd00::1\n", encoding="utf-8")
    assert config_host(str(config)) == "[fd00::1]"
    assert config_host(str(tmp_path / "none.yaml")) == "127.0.0.1"


def test_merge_items_keeps_order_and_drops_repeats_and_empties():
    merged = merge_items({"paths": ["/a", "/b"], "commands": [["x"]]}, None, {"paths": ["/b", "", "/c"], "commands": [["x"], ["y"]]})
    assert merged["paths"] == ["/a", "/b", "/c"]
    assert merged["commands"] == [["x"], ["y"]]
    assert merged["units"] == []


def test_trees_and_listings(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "m" / "sub").mkdir()
    (tmp_path / "m" / "sub" / "w.bin").write_bytes(b"12345")
    tree = observe_tree(str(tmp_path / "m"))
    assert sorted(tree["entries"]) == ["config.json", "sub/", "sub/w.bin"]
    assert tree["entries"]["sub/w.bin"][0] == 5
    assert observe_tree(str(tmp_path / "nothing")) == {"exists": False}
    (tmp_path / "blob").write_text('{"a": 1}', encoding="utf-8")
    (tmp_path / "m" / "link.json").symlink_to(tmp_path / "blob")
    before = observe_tree(str(tmp_path / "m"))
    (tmp_path / "blob").write_text('{"a": 2}', encoding="utf-8")  # same size, through the link
    assert observe_tree(str(tmp_path / "m")) != before
    listing = observe_listing(str(tmp_path / "m" / "s*"))
    assert listing == {str(tmp_path / "m" / "sub"): ["w.bin"]}


def test_a_record_round_trips_and_a_broken_one_reads_as_none(tmp_path):
    path = str(tmp_path / "rec" / "converged.json")
    save_record(path, {"version": 1, "fingerprint": "f"})
    assert load_record(path) == {"version": 1, "fingerprint": "f"}
    assert os.stat(path).st_mode & 0o777 == 0o600
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("{broken")
    assert load_record(path) is None
    assert load_record(str(tmp_path / "none.json")) is None


def test_a_large_file_of_a_tree_edited_in_place_is_seen_by_its_time(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "TREE_HASH_LIMIT", 2)
    shard = tmp_path / "m" / "model-00001.safetensors"
    shard.parent.mkdir()
    shard.write_bytes(b"12345")
    before = observe_tree(str(tmp_path / "m"))
    assert before["entries"]["model-00001.safetensors"][4] == os.stat(shard).st_mtime_ns
    os.utime(shard, ns=(1, 10 ** 9))  # the same size, written at another time
    assert observe_tree(str(tmp_path / "m")) != before


HOST_ITEMS = {"paths": [], "commands": [["sorted", "dpkg-query", "-W"]]}


def check_host(host, record, host_fingerprint="host1"):
    items = merge_items((record or {}).get("items"))
    return compare_host(record, host_fingerprint, observe(items, host.run, host.http))


def test_the_host_part_names_only_the_host_phases_items(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host, host_items=HOST_ITEMS)
    assert record["host"] == {"fingerprint": "host1", "keys": sorted([
        "commands:sorted dpkg-query -W", "paths:%s" % host.files["gpu-tuning.env"]])}
    assert item_keys({"trees": ["/m"], "listings": ["/v/lib/*"], "units": ["u"], "http": [{"url": "x"}]}) == [
        "listings:/v/lib/*", "trees:/m"]
    assert "host" not in make_record("fp1", ITEMS, {}, {})


def test_host_phases_converged_while_the_server_changed(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host, host_items=HOST_ITEMS)
    host.files["main.yaml"].write_text("host: 0.0.0.0\nport: 30000\nmem_fraction_static: 0.8\n", encoding="utf-8")
    host.active = "failed"
    assert check(host, record, "fp2") != []
    assert check_host(host, record) == []


def test_host_phases_drift_on_their_inputs_or_items(tmp_path):
    host = FakeHost(tmp_path)
    record = recorded(host, host_items=HOST_ITEMS)
    assert check_host(host, record, "host2") == ["the inputs of the host phases changed (variables or the collection's code)"]
    host.packages = "ii python3-venv 3.11\n"
    assert check_host(host, record) == ["commands:sorted dpkg-query -W changed"]
    host.files["gpu-tuning.env"].write_text("NCCL_P2P_DISABLE=1\n", encoding="utf-8")
    assert check_host(host, record, "host2") == [
        "the inputs of the host phases changed (variables or the collection's code)",
        "commands:sorted dpkg-query -W changed", "paths:%s changed" % host.files["gpu-tuning.env"]]


def test_no_host_part_means_the_host_phases_run(tmp_path):
    host = FakeHost(tmp_path)
    assert check_host(host, recorded(host)) == ["no record of the host phases"]
    assert check_host(host, recorded(host, host_items=HOST_ITEMS), "") == ["no record of the host phases"]
    assert check_host(host, None) == ["no record of a converged run"]
    record = recorded(host, host_items=HOST_ITEMS)
    record["host"]["keys"] = []
    assert check_host(host, record) == ["no record of the host phases' items"]
    record["host"]["keys"] = ["paths:/not/recorded"]
    assert check_host(host, record) == ["paths:/not/recorded changed"]
