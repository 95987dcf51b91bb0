# -*- coding: utf-8 -*-
"""converged/state, exactly (make mutation MODULES=converged/state): each observation's whole value (a record
written by one release is compared by the next, so a renamed key is drift on every converged host), the size
cut-offs at their boundary (16 MiB for a listed file, 1 MiB below a tree, on sparse files), the exact commands a
unit and an http item are observed with, and the record's own fields."""

from __future__ import annotations

import os
import stat

from ansible_collections.gpufleet.sglang.plugins.module_utils.converged import state

MIB = 1024 * 1024
PROPS = ("LoadState,ActiveState,UnitFileState,NeedDaemonReload,FragmentPath,EnvironmentFiles,ExecStart,User,Group,"
         "WorkingDirectory")


def owner(path):
    info = os.lstat(path)
    return info.st_uid, info.st_gid


def sparse(path, size):
    with open(path, "wb") as handle:
        handle.truncate(size)
    return str(path)


def test_digest_does_not_depend_on_key_order():
    assert state.digest({"b": 1, "a": [1, 2]}) == state.digest({"a": [1, 2], "b": 1})
    assert state.digest({"a": 1}) != state.digest({"a": 2})


def test_observe_path_of_each_kind(tmp_path):
    uid, gid = owner(tmp_path)
    assert state.observe_path(str(tmp_path / "none")) == {"exists": False}
    target = tmp_path / "f.txt"
    target.write_text("abc", encoding="utf-8")
    os.chmod(target, 0o640)
    assert state.observe_path(str(target)) == {
        "exists": True, "mode": 0o640, "uid": uid, "gid": gid, "type": stat.S_IFREG, "size": 3,
        "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    os.symlink("f.txt", tmp_path / "link")
    assert state.observe_path(str(tmp_path / "link")) == {
        "exists": True, "mode": stat.S_IMODE(os.lstat(tmp_path / "link").st_mode), "uid": uid, "gid": gid,
        "type": stat.S_IFLNK, "target": "f.txt"}
    os.chmod(tmp_path, 0o750)
    assert state.observe_path(str(tmp_path)) == {"exists": True, "mode": 0o750, "uid": uid, "gid": gid,
                                                 "type": stat.S_IFDIR}
    assert state.observe_path(str(target) + "/below") == {"error": "NotADirectoryError"}


def test_a_listed_file_is_hashed_up_to_16_mib_and_timed_above(tmp_path):
    at = sparse(tmp_path / "at", 16 * MIB)
    seen = state.observe_path(at)
    assert seen["size"] == 16 * MIB and seen["sha256"] == state.file_sha256(at) and "mtime_ns" not in seen
    over = sparse(tmp_path / "over", 16 * MIB + 1)
    seen = state.observe_path(over)
    assert seen["size"] == 16 * MIB + 1 and seen["mtime_ns"] == os.stat(over).st_mtime_ns and "sha256" not in seen


def test_a_file_below_a_tree_is_hashed_up_to_1_mib_and_timed_above(tmp_path):
    at = sparse(tmp_path / "at", MIB)
    over = sparse(tmp_path / "over", MIB + 1)
    entries = state.observe_tree(str(tmp_path))["entries"]
    assert entries["at"][4] == state.file_sha256(at)
    assert entries["over"][4] == os.stat(over).st_mtime_ns


def test_observe_tree_exactly(tmp_path):
    uid, gid = owner(tmp_path)
    root = tmp_path / "model"
    (root / "sub").mkdir(parents=True)
    (root / "cfgX").write_text("ab", encoding="utf-8")
    os.chmod(root / "cfgX", 0o644)
    os.chmod(root / "sub", 0o755)
    os.symlink(str(tmp_path / "nowhere"), root / "broken")
    other = tmp_path / "other"
    other.mkdir()
    (other / "inside").write_text("x", encoding="utf-8")
    os.chmod(other, 0o700)
    os.symlink(str(other), root / "linked")
    sha_ab = "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603"
    assert state.observe_tree(str(root)) == {"exists": True, "entries": {
        "broken": "broken",
        "cfgX": [2, 0o644, uid, gid, sha_ab],
        "linked/": [0, 0o700, uid, gid],  # a linked folder is listed, not walked into
        "sub/": [0, 0o755, uid, gid],
    }}
    assert state.observe_tree(str(tmp_path / "none")) == {"exists": False}


def test_observe_command_exactly():
    calls = []

    def run(argv):
        calls.append(argv)
        return 3, "b\na\n", "err"

    assert state.observe_command(["sorted", "pip", "list"], run) == {"rc": 3, "out": ["a", "b"]}
    assert state.observe_command(["pip", "list"], run) == {"rc": 3, "out": ["b", "a"]}
    assert calls == [["pip", "list"], ["pip", "list"]]

    def missing(argv):
        raise FileNotFoundError(argv[0])

    assert state.observe_command(["nvidia-smi"], missing) == {"error": "FileNotFoundError"}


def test_observe_unit_runs_systemctl_show_with_every_property_and_reads_users(tmp_path):
    uid, gid = owner(tmp_path)
    work = tmp_path / "state" / "main"
    work.mkdir(parents=True)
    (tmp_path / "state" / ".launch").mkdir()
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "main.yml").write_text("host: 0.0.0.0\n", encoding="utf-8")
    os.chmod(etc / "main.yml", 0o600)
    os.chmod(etc, 0o755)
    calls = []
    show = ("LoadState=loaded\nActiveState=active\nUnitFileState=enabled\nNeedDaemonReload=no\nUser=sglang\n"
            "Group=gpu\nWorkingDirectory=!-%s\nExecStart={ path=/x ; argv[]=/x serve --config %s ; }\n"
            % (work, etc / "main.yml"))

    def run(argv):
        calls.append(argv)
        return (0, show, "") if argv[0] == "systemctl" else (0, "%s line\n" % argv[0], "")

    seen = state.observe_unit("sglang-main.service", run)
    assert calls == [["systemctl", "show", "--no-pager", "-p", PROPS, "sglang-main.service"],
                     ["getent", "passwd", "sglang"], ["getent", "group", "gpu"], ["id", "-nG", "sglang"]]
    assert seen["props"] == {"LoadState": "loaded", "ActiveState": "active", "UnitFileState": "enabled",
                             "NeedDaemonReload": "no", "User": "sglang", "Group": "gpu"}
    config = str(etc / "main.yml")
    assert seen["files"] == {config: state.observe_path(config)}
    assert seen["files"][config]["mode"] == 0o600
    assert seen["folders"] == {str(work): state.observe_path(str(work)),
                               str(tmp_path / "state"): state.observe_path(str(tmp_path / "state")),
                               str(etc): {"exists": True, "mode": 0o755, "uid": uid, "gid": gid, "type": stat.S_IFDIR}}
    assert seen["launch_state"] == {"exists": True, "entries": {}}
    assert seen["passwd"] == {"rc": 0, "out": ["getent line"]}
    assert seen["group"] == {"rc": 0, "out": ["getent line"]}
    assert seen["groups_of_user"] == {"rc": 0, "out": ["id line"]}
    assert sorted(seen) == ["files", "folders", "group", "groups_of_user", "launch_state", "passwd", "props"]


def test_observe_unit_of_a_unit_systemd_does_not_show():
    def run(argv):
        return 1, "LoadState=loaded\nUser=root\n", "no such unit"

    assert state.observe_unit("gone.service", run) == {
        "props": {"LoadState": "", "ActiveState": "", "UnitFileState": "", "NeedDaemonReload": "", "User": "",
                  "Group": ""}, "files": {}}


def test_a_yaml_config_outside_the_state_folder_has_its_folder_observed(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    for name in ("a.yaml", "b.yml", "c.env"):
        (etc / name).write_text("x", encoding="utf-8")
    other = tmp_path / "env"
    other.mkdir()
    (other / "c.env").write_text("x", encoding="utf-8")
    show = ("ExecStart={ argv[]=/x --config %s ; }\nEnvironmentFiles=%s (ignore_errors=no)\n"
            % (etc / "a.yaml", other / "c.env"))
    seen = state.observe_unit("u", lambda argv: (0, show, ""))
    assert sorted(seen["folders"]) == [str(etc)]
    show = "ExecStart={ argv[]=/x --config %s ; }\n" % (etc / "b.yml")
    assert sorted(state.observe_unit("u", lambda argv: (0, show, ""))["folders"]) == [str(etc)]


def test_ready_url_of_each_item_shape(tmp_path):
    calls = []
    config = tmp_path / "main.yaml"
    config.write_text("host: 10.1.2.3\nport: 30000\n", encoding="utf-8")

    def run(argv):
        calls.append(argv)
        return 0, "ExecStart={ argv[]=/x serve --config %s ; }\n" % config, ""

    assert state.ready_url({"url": "http://h:1/ready", "unit": "u"}, run) == "http://h:1/ready"
    assert calls == []
    assert state.ready_url({"unit": "sglang-main.service", "port": 30000}, run) == "http://10.1.2.3:30000/health"
    assert calls == [["systemctl", "show", "--no-pager", "-p", "ExecStart,FragmentPath", "sglang-main.service"]]
    yml = tmp_path / "main.yml"
    yml.write_text("host: 10.9.9.9\n", encoding="utf-8")
    assert state.ready_url({"unit": "u", "port": 1, "path": "/ready"},
                           lambda argv: (0, "ExecStart={ argv[]=/x --config %s ; }\n" % yml, "")) == "http://10.9.9.9:1/ready"
    assert state.ready_url({"unit": "u", "port": 2}, lambda argv: (1, "ExecStart={ argv[]=/x --config %s ; }\n" % yml,
                                                                   "")) == "http://127.0.0.1:2/health"


def test_observe_every_kind_exactly(tmp_path):
    (tmp_path / "venv" / "site-packages").mkdir(parents=True)
    (tmp_path / "venv" / "site-packages" / "a-1.dist-info").mkdir()
    (tmp_path / "tree").mkdir()
    asked = []

    def http(url, timeout):
        asked.append((url, timeout))
        return 200

    items = {"paths": [str(tmp_path / "none")], "trees": [str(tmp_path / "tree")],
             "listings": [str(tmp_path / "venv" / "*")], "commands": [["sorted", "echo", "a b"]],
             "http": [{"url": "http://127.0.0.1:1/health"}, {"url": "http://127.0.0.1:2/health", "timeout": 5}]}
    seen = state.observe(items, lambda argv: (0, "z\ny\n", ""), http)
    assert seen == {
        "paths": {str(tmp_path / "none"): {"exists": False}},
        "trees": {str(tmp_path / "tree"): {"exists": True, "entries": {}}},
        "listings": {str(tmp_path / "venv" / "*"): {str(tmp_path / "venv" / "site-packages"): ["a-1.dist-info"]}},
        "commands": {"sorted echo 'a b'": {"rc": 0, "out": ["y", "z"]}},
        "units": {},
        "http": {"http://127.0.0.1:1/health": True, "http://127.0.0.1:2/health": True},
    }
    assert asked == [("http://127.0.0.1:1/health", 2.0), ("http://127.0.0.1:2/health", 5.0)]


def test_problems_now_of_a_unit_without_a_state():
    seen = {"units": {"u": {"props": {"ActiveState": "", "NeedDaemonReload": "no"}}}, "http": {}}
    assert state.problems_now(seen) == ["units:u is unknown"]


def test_the_record_and_its_comparison_exactly(tmp_path):
    seen = {"paths": {"/a": {"exists": False}}}
    record = state.make_record("fp", {"paths": ["/a"]}, seen, {"x": 1})
    assert record == {"version": 1, "fingerprint": "fp", "items": {"paths": ["/a"]},
                      "digests": {"paths:/a": state.digest({"exists": False})}, "outputs": {"x": 1}}
    assert state.compare(record, "fp", seen) == []
    grown = {"paths": {"/a": {"exists": False}, "/b": {"exists": True}}}
    assert state.compare(record, "fp", grown) == ["paths:/b is new"]
    assert state.compare(dict(record, version=2), "fp", seen) == ["no record of a converged run"]


def test_a_saved_record_is_root_only_and_sorted(tmp_path):
    path = tmp_path / "new" / "record.json"
    state.save_record(str(path), {"b": 1, "a": 2})
    assert path.read_text(encoding="utf-8") == '{"a": 2, "b": 1}'
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    state.save_record(str(path), {"c": 3})  # the folder exists already: no error
    assert state.load_record(str(path)) == {"c": 3}
    assert sorted(os.listdir(path.parent)) == ["record.json"]


def test_a_record_with_a_bare_file_name_goes_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    state.save_record("record.json", {"a": 1})
    assert state.load_record(str(tmp_path / "record.json")) == {"a": 1}
    assert sorted(os.listdir(tmp_path)) == ["record.json"]  # no folder made for it
