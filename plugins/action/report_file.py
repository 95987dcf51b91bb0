# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for gpufleet.sglang.report_file: write a report on the controller without a module run
(plugin_utils/report_file.py says why)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.report_file import ReportFileError, write_report


class ActionModule(ActionBase):
    """Writes content to dest on the controller, as copy with content would."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("content", "dest", "mode"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        if not isinstance(args.get("dest"), str) or not args["dest"]:
            return dict(result, failed=True, msg="report_file: dest (a path on the controller) is required")
        if not isinstance(args.get("content"), str):
            return dict(result, failed=True, msg="report_file: content must be text (use to_nice_json for data)")
        try:
            out = write_report(args["dest"], args["content"], args.get("mode", "0644"), check_mode=bool(self._task.check_mode))
        except (ReportFileError, OSError) as err:
            return dict(result, failed=True, msg="report_file: %s" % err)
        diff = out.pop("diff")
        result.update(out)
        if self._task.diff and out["changed"]:
            result["diff"] = diff
        return result
