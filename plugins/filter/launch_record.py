# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.launch_record: what runs as one SGLang instance, from its launch's result.

The record lives in plugin_utils/server_launch.py; documentation: launch_record.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import ServerLaunchError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import launch_record as _launch_record


def launch_record(launch: Any, unit: Any, port: Any, sglang_version: Any, check_mode: Any = False,
                  written: Optional[Dict[str, Any]] = None, findings: Optional[Dict[str, Any]] = None,
                  security: Any = "") -> Dict[str, Any]:
    """``__sglang_server_launch | gpufleet.sglang.launch_record(unit=..., port=..., sglang_version=..., ...)``."""
    if written is not None and not isinstance(written, dict):
        raise AnsibleFilterError("launch_record: written is a dict of path: changed, not %s" % type(written).__name__)
    try:
        return _launch_record(launch, unit, port, sglang_version, check_mode=check_mode, written=written, findings=findings,
                              security=security)
    except ServerLaunchError as exc:
        raise AnsibleFilterError("launch_record: %s" % exc) from exc


class FilterModule:
    """Jinja filters of gpufleet.sglang for the record of a launch."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"launch_record": launch_record}
