# -*- coding: utf-8 -*-
"""flags.releases on its own: what is a release number, each reason a version is not one (with its hint),
mapping, ranges, and which flag table a release gets, word for word (make mutation:
tests/mutation/modules.yml)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import (
    ReleaseError,
    exact_table,
    format_release,
    in_release_range,
    map_release,
    nearest_known,
    parse_release,
    release_key,
    release_problem,
    release_sort_key,
    select_table_release,
)

MAP_HINT = ("%s is not an SGLang release, so no release's flags and rules can be assumed for it. Map it to the release "
            "whose flags it has, e.g. sglang_server_release_map: {'%s': '0.5.23'}, or install a release "
            "(sglang_install_version).")
TABLES = ["0.5.9", "0.5.10", "0.5.12", "0.5.14.post2", "0.5.23", "README", "0.5.x"]


@pytest.mark.parametrize("text, key", [
    ("0.5.23", (0, 5, 23, 0)), ("v0.5.23", (0, 5, 23, 0)), ("0.5.23.post1", (0, 5, 23, 1)), (" 0.5.9 ", (0, 5, 9, 0)),
    ("10.20.30.post12", (10, 20, 30, 12)), ("v1.0.0.post0", (1, 0, 0, 0)),
])
def test_release_numbers(text, key):
    assert release_key(text) == key
    assert parse_release(text) == key[:3]


@pytest.mark.parametrize("value, shown", [(0.5, "0.5"), (True, "True"), (None, "None"), (["0.5.23"], "['0.5.23']")])
def test_a_release_that_is_not_a_string_is_refused_with_the_yaml_hint(value, shown):
    with pytest.raises(ReleaseError) as caught:
        release_key(value)
    assert caught.value.message == "the SGLang release must be a string such as '0.5.23', not %s" % shown
    assert str(caught.value) == caught.value.message
    assert caught.value.hint == "Quote it in YAML: sglang_install_version: '0.5.23'."


@pytest.mark.parametrize("text, message, hint", [
    ("latest", "SGLang release 'latest' is not a release number such as '0.5.23'",
     "Give the version pip installs (pip show sglang), quoted in YAML: sglang_install_version: '0.5.23'."),
    ("0.5", "SGLang release '0.5' is not a release number such as '0.5.23'",
     "Give the version pip installs (pip show sglang), quoted in YAML: sglang_install_version: '0.5.23'."),
    ("0.5.23+cu128", "SGLang version '0.5.23+cu128' carries a local version label (+cu128): a build of its own",
     MAP_HINT % ("A local build", "0.5.23+cu128")),
    ("0.5.23.post1+abc", "SGLang version '0.5.23.post1+abc' carries a local version label (+abc): a build of its own",
     MAP_HINT % ("A local build", "0.5.23.post1+abc")),
    ("0.5.24rc1", "SGLang version '0.5.24rc1' is a pre-release", MAP_HINT % ("A pre-release", "0.5.24rc1")),
    ("0.5.24-beta.2", "SGLang version '0.5.24-beta.2' is a pre-release", MAP_HINT % ("A pre-release", "0.5.24-beta.2")),
    ("0.5.24a", "SGLang version '0.5.24a' is a pre-release", MAP_HINT % ("A pre-release", "0.5.24a")),
    ("0.5.24.dev3", "SGLang version '0.5.24.dev3' is a development build", MAP_HINT % ("A development build", "0.5.24.dev3")),
    ("0.5.24.post1.dev0", "SGLang version '0.5.24.post1.dev0' is a development build",
     MAP_HINT % ("A development build", "0.5.24.post1.dev0")),
    ("0.5.23.1", "SGLang release '0.5.23.1' is not a release number such as '0.5.23': '.1' follows the release number",
     "Give the version pip installs (pip show sglang); anything else needs an explicit mapping in sglang_server_release_map."),
])
def test_each_reason_a_version_is_not_a_release(text, message, hint):
    assert release_problem(text) == (message, hint)
    with pytest.raises(ReleaseError) as caught:
        release_key(text)
    assert (caught.value.message, caught.value.hint) == (message, hint)


def test_a_release_error_without_a_hint():
    error = ReleaseError("m")
    assert (error.message, error.hint, str(error)) == ("m", "", "m")


@pytest.mark.parametrize("release, text", [((0, 5, 23), "0.5.23"), ((0, 5, 23, 0), "0.5.23"), ((0, 5, 23, 2), "0.5.23.post2"),
                                           ((1, 2, 3, 4, 5), "1.2.3.post4")])
def test_formatted_releases(release, text):
    assert format_release(release) == text


def test_mapping_applies_only_to_an_exact_entry():
    mapping = {"0.5.24rc1": "0.5.23", "custom": "v0.5.14.post2", " spaced ": "0.5.9"}
    assert map_release("0.5.24rc1", mapping) == ("0.5.23", "0.5.24rc1")
    assert map_release(" custom ", mapping) == ("0.5.14.post2", "custom")
    assert map_release("0.5.23", mapping) == ("0.5.23", None)
    assert map_release("v0.5.12", None) == ("0.5.12", None)
    assert map_release("v0.5.12", {}) == ("0.5.12", None)
    with pytest.raises(ReleaseError):
        map_release("0.5.25rc1", mapping)


def test_a_mapping_to_what_is_not_a_release_is_named():
    with pytest.raises(ReleaseError) as caught:
        map_release("mine", {"mine": "latest"})
    assert caught.value.message == "sglang_server_release_map maps 'mine' to 'latest', which is not a release number such as '0.5.23'"
    assert caught.value.hint == "Map it to a release that has a flag table, e.g. '0.5.23'."
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize("release, since, until, inside", [
    ((0, 5, 12), "0.5.12", "0.5.14", True), ((0, 5, 14), "0.5.12", "0.5.14", True), ((0, 5, 11), "0.5.12", "0.5.14", False),
    ((0, 5, 15), "0.5.12", "0.5.14", False), ((0, 5, 14, 3), "0.5.12", "0.5.14", True), ((0, 5, 1), None, "0.5.14", True),
    ((9, 0, 0), "0.5.12", None, True), ((0, 5, 11), "0.5.12", None, False), ((0, 5, 15), None, "0.5.14.post1", False),
    ((0, 5, 12), None, None, True),
])
def test_release_ranges_include_both_ends(release, since, until, inside):
    assert in_release_range(release, since, until) is inside


def test_exact_tables():
    assert exact_table("0.5.10", TABLES) == "0.5.10"
    assert exact_table("v0.5.14.post2", TABLES) == "0.5.14.post2"
    assert exact_table("0.5.14", TABLES) is None
    assert exact_table("0.5.11", TABLES) is None


@pytest.mark.parametrize("requested, table", [
    ("0.5.9", "0.5.9"), ("0.5.11", "0.5.10"), ("0.5.13", "0.5.12"), ("0.5.14", "0.5.12"), ("0.5.14.post2", "0.5.14.post2"),
    ("0.5.14.post3", "0.5.14.post2"), ("0.5.22", "0.5.14.post2"), ("0.5.23", "0.5.23"), ("0.5.23.post1", "0.5.23"),
    ("0.5.9.post1", "0.5.9"),
])
def test_a_release_gets_its_own_table_else_the_nearest_older_one(requested, table):
    assert select_table_release(requested, TABLES) == table


def test_older_than_every_table_is_refused_word_for_word():
    with pytest.raises(ReleaseError) as caught:
        select_table_release("0.5.8", TABLES)
    assert caught.value.message == "SGLang 0.5.8 is older than the oldest bundled flag table (0.5.9)"
    assert caught.value.hint == "Install SGLang 0.5.9 or newer (the --config file needs 0.5.9+)."


def test_newer_than_every_table_is_refused_word_for_word():
    with pytest.raises(ReleaseError) as caught:
        select_table_release("0.5.24", TABLES)
    assert caught.value.message == "no flag table for SGLang 0.5.24; the newest one known is 0.5.23"
    assert caught.value.hint == (
        "Run the deploy once with SGLang 0.5.24 installed on the host: the sglang_server role then dumps its table from the"
        " host's own parser into sglang_server_flag_tables_dir on the controller, where this lint finds it.")


def test_no_tables_at_all():
    with pytest.raises(ReleaseError) as caught:
        select_table_release("0.5.23", ["README"])
    assert (caught.value.message, caught.value.hint) == ("no SGLang flag tables are available",
                                                         "Check the collection's data/sglang_flags folder.")


@pytest.mark.parametrize("release, known, nearest", [
    ((0, 5, 12), ["0.5.9", "0.5.12", "0.5.14"], "0.5.12"), ((0, 5, 13), ["0.5.14", "0.5.9", "0.5.12"], "0.5.12"),
    ((0, 5, 8), ["0.5.9", "0.5.12"], "0.5.9"), ((0, 5, 99, 1), ["0.5.9", "0.5.12"], "0.5.12"),
    ((0, 5, 12), ["x", "0.5.9"], "0.5.9"), ((0, 5, 12), ["x"], None), ((0, 5, 12), [], None),
    ((0, 5, 14), ["0.5.14.post1"], "0.5.14"),
])
def test_the_nearest_known_release(release, known, nearest):
    assert nearest_known(release, known) == nearest


def test_sort_keys_put_what_does_not_parse_first():
    assert sorted(["0.5.10", "x", "0.5.9.post1", "0.5.9"], key=release_sort_key) == ["x", "0.5.9", "0.5.9.post1", "0.5.10"]
    assert release_sort_key("x") == (0, 0, 0, 0)
    assert release_sort_key("0.5.9.post1") == (0, 5, 9, 1)
