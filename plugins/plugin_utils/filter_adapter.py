# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the collection's filters turn the pure code's errors into Jinja errors: one place for every filter.

Why: a filter is a thin adapter over module_utils or plugin_utils, and its only job besides calling is to make a
bad input fail the task with a message that names the filter. Each filter wraps its function with
:func:`filter_errors` instead of writing its own try/except.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Type, TypeVar

from ansible.errors import AnsibleFilterError

F = TypeVar("F", bound=Callable[..., Any])


def filter_errors(name: str, *errors: Type[BaseException]) -> Callable[[F], F]:
    """Re-raise ``errors`` (the pure code's own ValueErrors) as AnsibleFilterError("<name>: <message>")."""
    def wrap(func: F) -> F:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except AnsibleFilterError:
                raise
            except errors as exc:
                raise AnsibleFilterError("%s: %s" % (name, exc)) from exc
        return call  # type: ignore[return-value]
    return wrap


def as_number(value: Any, message: str) -> Any:
    """A number that may arrive as text (an extra var, an inventory string); ValueError(message % value) if not one."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ValueError(message % (value,)) from None
    return value


def expect_mapping(value: Any, message: str) -> Any:
    """The value when it is a dict; ValueError("<message>, not <type>") otherwise."""
    if not isinstance(value, dict):
        raise ValueError("%s, not %s" % (message, type(value).__name__))
    return value
