# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.tune_report: the flag tuner's measurements in, verdicts, winning args, Markdown and SVG out.

The decision rule lives in plugin_utils/tune_verdicts.py (pure, unit-tested); this file only adapts it to Jinja
for tune.yml. A filter rather than a module because everything it needs is already in the play's variables:
it runs on the controller, identically under --check, with no round trip. Documentation: tune_report.yml
beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_verdicts import DEFAULT_METRIC, DEFAULT_MIN_GAIN_PCT, TuneReportError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_report import normalise_candidate
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.tune_report import tune_report as _tune_report
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.filter_adapter import as_number, filter_errors

_KEYWORDS = ("baseline", "ceiling", "min_gain_pct", "metric")


@filter_errors("tune_report", TuneReportError, ValueError)
def tune_report(candidates: Any, baseline: Any = None, ceiling: Any = None, min_gain_pct: Any = DEFAULT_MIN_GAIN_PCT,
                metric: Any = DEFAULT_METRIC) -> Dict[str, Any]:
    """``candidates | gpufleet.sglang.tune_report(baseline=..., ceiling=..., min_gain_pct=2.0)``; errors become filter errors.

    ``min_gain_pct`` may arrive as text (an extra var, an inventory string), so it is converted here; the runs
    are not, because a throughput that is text means the tuner recorded the wrong field.
    """
    if baseline is None:
        raise AnsibleFilterError("tune_report: baseline is required (a dict with args and runs of the base config)")
    min_gain_pct = as_number(min_gain_pct, "min_gain_pct must be a number of percent, not %r")
    return _tune_report(candidates, baseline, ceiling=ceiling, min_gain_pct=min_gain_pct, metric=str(metric))


@filter_errors("tune_candidates", TuneReportError)
def tune_candidate(item: Any) -> Dict[str, Any]:
    """``tune_candidates | map('gpufleet.sglang.tune_candidate')``: each as ``{name, args}``."""
    return normalise_candidate(item)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the flag tuner's report."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"tune_report": tune_report, "tune_candidate": tune_candidate}
