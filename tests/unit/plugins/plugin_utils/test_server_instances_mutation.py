# -*- coding: utf-8 -*-
"""The settings check's promises held exactly (the mutation run's survivors, issue 22): the control-character
cut-offs (space and no-break space pass, C0, DEL and C1 do not), each message whole, and folders whose names end
in letters the path rule strips nothing from."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import server_instances_check


def env_check(value):
    return server_instances_check([], "main", {}, {"NOTE": value})


def host_check(user="sglang", uid=None, folder="/etc/sglang"):
    return server_instances_check([], "main", {}, {}, user=user, uid=uid, paths={"sglang_server_config_dir": folder})


@pytest.mark.parametrize("value", ["a b", "~", "caf\u00e9", "no\u00a0break"])
def test_printable_values_pass_from_the_space_and_from_the_no_break_space_on(value):
    assert env_check(value) == []


@pytest.mark.parametrize("value, what", [
    ("a\rb", "a carriage return"), ("\x1f", "the control character U+001F"), ("x\x7f", "the control character U+007F"),
    ("\x80", "the control character U+0080"), ("\x9f", "the control character U+009F")])
def test_each_control_character_is_refused_whole(value, what):
    assert env_check(value) == [
        "sglang_server_env.NOTE: the value holds %s (at character %d); a systemd environment file cannot carry it - remove "
        "it or pass the value another way (a file the service reads)." % (what, len(value) - 1 if value != "a\rb" else 1)]


def test_root_whole():
    assert host_check(user="root") == [
        "sglang_server_user: 'root' is root; SGLang must run as an unprivileged system user (the default 'sglang'), so that a "
        "hole in the server is not root on the box."]


@pytest.mark.parametrize("folder", ["/X", "/XXXX", "/srv/X", "/srv/sglangX"])
def test_folders_ending_in_a_capital_x_are_plain_folders(folder):
    assert host_check(folder=folder) == []


@pytest.mark.parametrize("folder", ["//etc/sglang", "/etc/sglang//"])
def test_a_doubled_slash_is_refused_whole_even_where_normpath_keeps_it(folder):
    assert host_check(folder=folder) == [
        "sglang_server_config_dir: %r is not an absolute, normalised folder other than '/'; write it as one (no '..', '.' or "
        "'//'), so the instances' files stay inside it." % folder]


def test_a_folder_with_a_control_character_whole():
    assert host_check(folder="/srv/a\tb") == ["sglang_server_config_dir: '/srv/a\\tb' holds a control character; name a plain folder."]
