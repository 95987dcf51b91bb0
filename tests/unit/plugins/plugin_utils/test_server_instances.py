# -*- coding: utf-8 -*-
"""The instances a host runs and the settings check: exactly the inputs the role's old assert accepted, and for
each rule one message naming the variable at fault and what to do."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import (
    ServerInstancesError, server_instances, server_instances_check)

SINGLE = ("main", {"tp_size": 2}, {"CUDA_VISIBLE_DEVICES": "0,1"})


UNSET = object()


def check(instances, name="main", args=UNSET, env=UNSET):
    """The check with the role's defaults for what a test does not set."""
    return server_instances_check(instances, name, {} if args is UNSET else args, {} if env is UNSET else env)


# ---------------------------------------------------------------------------------------------------------------------
# The list


def test_without_a_list_the_single_instance_is_built_from_the_role_variables():
    assert server_instances([], *SINGLE, "k3y") == [
        {"name": "main", "args": {"tp_size": 2}, "env": {"CUDA_VISIBLE_DEVICES": "0,1"}, "api_key": "k3y"}]


def test_a_list_replaces_the_single_instance_and_is_taken_as_given():
    instances = [{"name": "big", "args": {"port": 30000}}, {"name": "small", "args": {"port": 30001}, "api_key": "x", "probe": {}}]
    result = server_instances(instances, *SINGLE, "k3y")
    assert result == instances
    assert result is not instances  # a new list: the role's fact is not the inventory's own object


@pytest.mark.parametrize("value", [None, "main", {"name": "main"}])
def test_something_other_than_a_list_is_refused(value):
    with pytest.raises(ServerInstancesError, match="sglang_server_instances must be a list of {name, args, env, api_key}, not "):
        server_instances(value, *SINGLE, "")


# ---------------------------------------------------------------------------------------------------------------------
# What the old assert accepted passes


@pytest.mark.parametrize("instances,name,args,env", [
    ([], "main", {}, {}),
    ([], "a", {"port": 30000}, {"_X1": "1", "HF_HUB_OFFLINE": "1"}),
    ([], "x" * 32, {}, {}),
    ([], "0-model_b", {}, {}),
    ([], 7, {}, {}),  # compared as text, like map('string')
    ([{"name": "big", "args": {"port": 30000}}, {"name": "small", "args": {"port": 30001}, "env": {"CUDA_VISIBLE_DEVICES": "2"}}],
     "ignored", {}, {"NCCL_DEBUG": "WARN"}),
    ([{"name": "big", "args": {}}, {"name": "small", "args": {"port": 30001}}], "main", {}, {}),  # 30000 by default
    ([{"name": "only"}], "main", {}, {}),  # args absent counts as {}
    ([{"name": "a", "args": {"port": 30000}}, {"name": "b", "args": {"port": "30000"}}], "main", {}, {}),  # compared as given
])
def test_usable_settings_give_no_message(instances, name, args, env):
    assert server_instances_check(instances, name, args, env) == []


# ---------------------------------------------------------------------------------------------------------------------
# Each rule, its message


@pytest.mark.parametrize("bad", ["Main", "-lead", "", "x" * 33, "has space", "a.b", "ümlaut"])
def test_single_instance_name_rule_names_sglang_server_instance(bad):
    assert check([], name=bad) == [
        "sglang_server_instance: %r is not a usable instance name; use 1 to 32 of a-z, 0-9, '_' and '-', starting with a "
        "letter or a digit (it names the unit sglang-<name>.service and the instance's files)." % bad]


def test_list_name_rule_names_the_item():
    assert check([{"name": "ok", "args": {"port": 1}}, {"name": "Not_OK", "args": {"port": 2}}]) == [
        "sglang_server_instances[1].name: 'Not_OK' is not a usable instance name; use 1 to 32 of a-z, 0-9, '_' and '-', "
        "starting with a letter or a digit (it names the unit sglang-<name>.service and the instance's files)."]


def test_duplicate_names_name_both_instances():
    assert check([{"name": "a", "args": {"port": 1}}, {"name": "b", "args": {"port": 2}}, {"name": "a", "args": {"port": 3}}]) == [
        "sglang_server_instances[2].name: 'a' is already the name of sglang_server_instances[0]; give each instance its own name."]


def test_names_are_compared_as_text():
    assert check([{"name": 1, "args": {"port": 1}}, {"name": "1", "args": {"port": 2}}]) == [
        "sglang_server_instances[1].name: '1' is already the name of sglang_server_instances[0]; give each instance its own name."]


@pytest.mark.parametrize("args,kind", [([{"tp_size": 2}], "list"), ("tp_size=2", "str"), (None, "NoneType")])
def test_args_must_be_a_mapping(args, kind):
    assert check([{"name": "a", "args": args}]) == [
        "sglang_server_instances[0].args: must be a mapping of SGLang options (option: value, e.g. tp_size: 2), not a %s." % kind]
    assert check([], args=args) == [
        "sglang_server_args: must be a mapping of SGLang options (option: value, e.g. tp_size: 2), not a %s." % kind]


def test_two_instances_on_one_port():
    assert check([{"name": "a", "args": {"port": 30001}}, {"name": "b", "args": {"port": 30001}}]) == [
        "sglang_server_instances[1].args.port: 30001 is already the port of sglang_server_instances[0]; give each instance its "
        "own port in its args."]


def test_a_port_left_at_the_default_says_so():
    assert check([{"name": "a", "args": {"port": 30000}}, {"name": "b", "args": {}}, {"name": "c"}]) == [
        "sglang_server_instances[1].args.port: 30000 (not set, so the default 30000) is already the port of "
        "sglang_server_instances[0]; give each instance its own port in its args.",
        "sglang_server_instances[2].args.port: 30000 (not set, so the default 30000) is already the port of "
        "sglang_server_instances[0]; give each instance its own port in its args."]


def test_an_instance_with_bad_args_is_left_out_of_the_port_rule():
    assert check([{"name": "a", "args": "port=30000"}, {"name": "b", "args": {}}]) == [
        "sglang_server_instances[0].args: must be a mapping of SGLang options (option: value, e.g. tp_size: 2), not a str."]


@pytest.mark.parametrize("key", ["1ST", "BAD-KEY", "A B", ""])
def test_environment_keys_must_be_shell_names_in_each_place_they_come_from(key):
    text = "%r is not a shell-style variable name (letters, digits and '_', not starting with a digit); rename or remove it." % key
    assert check([], env={key: "x"}) == ["sglang_server_env: " + text]  # the single instance's env, said once
    assert check([{"name": "a", "args": {}, "env": {"OK": "1", key: "x"}}]) == ["sglang_server_instances[0].env: " + text]
    assert check([{"name": "a", "args": {}}], env={key: "x"}) == ["sglang_server_env: " + text]


def test_an_environment_that_is_not_a_mapping():
    assert check([{"name": "a", "env": ["CUDA_VISIBLE_DEVICES=0"]}]) == [
        "sglang_server_instances[0].env: must be a mapping of environment variables (NAME: value), not a list."]
    assert check([], env="CUDA_VISIBLE_DEVICES=0") == [
        "sglang_server_env: must be a mapping of environment variables (NAME: value), not a str."]


def test_every_problem_is_reported_in_rule_order():
    messages = check([{"name": "A", "args": {"port": 1}, "env": {"9": "x"}}, {"name": "A", "args": []}, {"name": "c", "args": {"port": 1}}],
                     env={"bad key": "1"})
    assert [message.split(":")[0] for message in messages] == [
        "sglang_server_instances[0].name", "sglang_server_instances[1].name", "sglang_server_instances[1].name",
        "sglang_server_instances[1].args", "sglang_server_instances[2].args.port", "sglang_server_instances[0].env",
        "sglang_server_env"]


def test_items_that_are_not_instances_stop_the_check_there():
    assert check([{"name": "a", "args": {}}, "b", {"args": {"port": 1}}]) == [
        "sglang_server_instances[1]: must be a mapping with name and args (and optionally env, api_key, probe), not a str.",
        "sglang_server_instances[2].name: not set; every instance needs a name (it names its unit sglang-<name>.service and its files)."]


def test_a_list_that_is_not_a_list_is_one_message():
    assert check("main") == ["sglang_server_instances must be a list of {name, args, env, api_key}, not str."]


# ------------------------------------------------------------------------------------------------ bad input refused
@pytest.mark.parametrize("value, words", [
    ("a\nb", "sglang_server_env.NOTE: the value holds a newline (at character 1)"),
    ("a\x00b", "sglang_server_env.NOTE: the value holds a NUL (at character 1)"),
    ("tab\there", "sglang_server_env.NOTE: the value holds a tab (at character 3)"),
    ("esc\x1b[0m", "sglang_server_env.NOTE: the value holds the control character U+001B (at character 3)"),
])
def test_an_environment_value_with_a_control_character_is_refused_by_name(value, words):
    messages = check([], env={"NOTE": value, "PLAIN": "0,1"})
    assert len(messages) == 1 and messages[0].startswith(words)


def test_each_instance_env_value_is_checked_under_its_own_name():
    messages = server_instances_check([{"name": "a", "args": {"port": 1}, "env": {"X": "1\n2"}}], "main", {}, {"Y": "\r"})
    assert [m.split(":")[0] for m in messages] == ["sglang_server_instances[0].env.X", "sglang_server_env.Y"]


@pytest.mark.parametrize("name", ["main\n", "../etc", "a/b", "."])
def test_an_instance_name_that_would_leave_its_folder_is_refused(name):
    messages = check([], name=name)
    assert len(messages) == 1 and messages[0].startswith("sglang_server_instance: %r is not a usable instance name" % name)


@pytest.mark.parametrize("user, uid, words", [
    ("root", None, "sglang_server_user: 'root' is root;"),
    ("0", None, "sglang_server_user: '0' is root;"),
    ("admin", 0, "sglang_server_user: 'admin' has uid 0 on this host;"),
])
def test_the_service_user_is_never_root(user, uid, words):
    messages = server_instances_check([], "main", {}, {}, user=user, uid=uid, paths={})
    assert len(messages) == 1 and messages[0].startswith(words)


def test_an_unprivileged_user_and_plain_folders_pass():
    paths = {"sglang_server_config_dir": "/etc/sglang", "sglang_server_state_root": "/var/lib/sglang/"}
    assert server_instances_check([], "main", {}, {}, user="sglang", uid=998, paths=paths) == []
    assert server_instances_check([], "main", {}, {}, user="sglang", uid=None, paths=paths) == []  # created later, never 0


@pytest.mark.parametrize("folder", ["/etc/sglang/../../root", "etc/sglang", "/", "/etc//sglang", "/etc/./sglang"])
def test_a_folder_that_escapes_or_is_not_absolute_is_refused_by_name(folder):
    paths = {"sglang_server_config_dir": folder, "sglang_server_state_root": "/var/lib/sglang"}
    messages = server_instances_check([], "main", {}, {}, user="sglang", paths=paths)
    assert len(messages) == 1 and messages[0].startswith("sglang_server_config_dir: %r is not an absolute, normalised folder" % folder)


def test_every_failed_rule_is_its_own_message():
    messages = server_instances_check([], "main\n", {}, {"A": "x\ny"}, user="root", paths={"sglang_server_config_dir": "/a/../b"})
    assert [m.split(":")[0] for m in messages] == ["sglang_server_instance", "sglang_server_env.A", "sglang_server_user",
                                                   "sglang_server_config_dir"]
