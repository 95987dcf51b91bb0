# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.renamed_vars: a deprecation warning for each role variable still set under its old name.

Why a filter: ansible-core deprecates module options (``deprecated_aliases``) but has nothing for a role's
variables, and a ``debug`` task only prints text that no one filters or counts. A filter runs on the controller and
can call Ansible's own ``Display.deprecated``, so the warning is a real ``[DEPRECATION WARNING]``, shown once per
message, silenced by ``deprecation_warnings=False`` like every other deprecation, and naming the collection
release that drops the old name. The role keeps reading the old value itself (the new name's default is
``"{{ old_name | default(...) }}"``), so this filter only tells. Documentation: renamed_vars.yml beside this file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Dict, List

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

display = Display()


def deprecation_message(old: str, new: str) -> str:
    """What the operator reads: the old name, the one to use, and that the old value still counts for now."""
    return ("the variable %s is deprecated: use %s (until %s is removed, %s takes its value; when both are set, %s wins)"
            % (old, new, old, new, new))


def renamed_vars(renames: Any, defined: Any) -> List[str]:
    """``{old: new} | gpufleet.sglang.renamed_vars(query('ansible.builtin.varnames', '^prefix_'))``.

    Warns once for each old name in ``defined`` and returns those old names, sorted (empty when none is set).
    """
    if not isinstance(renames, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in renames.items()):
        raise AnsibleFilterError("renamed_vars: the input must map old variable names to new ones, got %r" % (renames,))
    if not isinstance(defined, (list, tuple)):
        raise AnsibleFilterError("renamed_vars: the argument must be the list of defined variable names, got %r" % (defined,))
    found = sorted(set(str(name) for name in defined) & set(renames))
    for old in found:
        display.deprecated(deprecation_message(old, renames[old]), version="1.0.0")
    return found


class FilterModule:
    """Jinja filters of gpufleet.sglang for renamed role variables."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"renamed_vars": renamed_vars}
