# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/filter_adapter: which errors become filter errors, with which message, and the two input checks."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.filter_adapter import (
    as_number, expect_mapping, filter_errors)


@filter_errors("gpufleet.sglang.demo", ValueError, KeyError)
def demo(kind, value=1):
    """Raises what it is told to, else returns its arguments."""
    if kind == "value":
        raise ValueError("bad value %s" % value)
    if kind == "key":
        raise KeyError("k")
    if kind == "type":
        raise TypeError("not wrapped")
    if kind == "filter":
        raise AnsibleFilterError("already a filter error")
    return kind, value


def test_results_and_names_pass_through():
    """A call that succeeds returns its result; the wrapper keeps the function's name and docstring."""
    assert demo("ok", value=3) == ("ok", 3)
    assert (demo.__name__, demo.__doc__) == ("demo", "Raises what it is told to, else returns its arguments.")


def test_listed_errors_become_filter_errors_naming_the_filter():
    """Each listed error type is re-raised as AnsibleFilterError('<name>: <message>'), chained to the original."""
    with pytest.raises(AnsibleFilterError) as err:
        demo("value", value=7)
    assert err.value.message == "gpufleet.sglang.demo: bad value 7"
    assert isinstance(err.value.__cause__, ValueError)
    with pytest.raises(AnsibleFilterError) as err:
        demo("key")
    assert err.value.message == "gpufleet.sglang.demo: 'k'"


def test_other_errors_and_filter_errors_are_not_rewrapped():
    """Errors not listed pass unchanged (a bug shows as one); a filter error is not named twice."""
    with pytest.raises(TypeError, match="^not wrapped$"):
        demo("type")
    with pytest.raises(AnsibleFilterError) as err:
        demo("filter")
    assert err.value.message == "already a filter error"


@pytest.mark.parametrize("value, expected", [("0.85", 0.85), ("2", 2.0), (" 3 ", 3.0), (5, 5), (0.5, 0.5),
                                             (None, None)])
def test_as_number(value, expected):
    """Text is read as a float; anything else is returned as it is."""
    out = as_number(value, "x must be a number, not %r")
    assert (out, type(out)) == (expected, type(expected))


def test_as_number_names_the_value():
    """Text that is no number gives the caller's message with the value."""
    with pytest.raises(ValueError) as err:
        as_number("fast", "tune_min_gain must be a number, not %r")
    assert str(err.value) == "tune_min_gain must be a number, not 'fast'"
    assert err.value.__cause__ is None and err.value.__suppress_context__ is True


@pytest.mark.parametrize("value, name", [([], "list"), ("a", "str"), (None, "NoneType"), (3, "int")])
def test_expect_mapping(value, name):
    """A dict passes; anything else is named by type."""
    assert expect_mapping({"a": 1}, "m") == {"a": 1}
    with pytest.raises(ValueError) as err:
        expect_mapping(value, "sglang_server_args must be a mapping")
    assert str(err.value) == "sglang_server_args must be a mapping, not %s" % name
