# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang release numbers: parsing, ranges, and which bundled flag table serves a release.

Standard library only: modules ship this file to the target.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import display

_RELEASE_RE = re.compile(r"^\s*v?(\d+)\.(\d+)\.(\d+)(\S*)\s*$")


class ReleaseError(ValueError):
    """The requested SGLang release cannot be linted (not a version, or outside the bundled tables)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_release(text: Any) -> Tuple[int, int, int]:
    """'0.5.23', 'v0.5.23' or '0.5.23.post1' -> (0, 5, 23). Raises ReleaseError for anything else."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise ReleaseError("sglang_version must be a string such as '0.5.23', not %s" % display(text),
                           "Quote it in YAML: sglang_install_version: '0.5.23'.")
    match = _RELEASE_RE.match(text)
    if not match:
        raise ReleaseError("sglang_version %s is not an SGLang release number such as '0.5.23'" % display(text),
                           "Give the version pip installs (pip show sglang).")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def format_release(release: Tuple[int, int, int]) -> str:
    return "%d.%d.%d" % tuple(release)


def in_release_range(release: Tuple[int, int, int], since: Optional[str], until: Optional[str]) -> bool:
    """True when since <= release <= until (either bound may be None)."""
    if since is not None and release < parse_release(since):
        return False
    if until is not None and release > parse_release(until):
        return False
    return True


def select_table_release(requested: Any, available: Iterable[str]) -> str:
    """Pick the flag table for a release: its own, else the nearest older dumped one.

    Releases between dumped tables (0.5.11, 0.5.13, 0.5.15-17, 0.5.21) changed few flags, and a flag that a
    release added is better reported as unknown than a removed one passed as valid; lint_server_args() says
    which table it used. Outside the bundled range there is no honest answer, so that raises ReleaseError.
    """
    wanted = parse_release(requested)
    tables = {}
    for name in available:
        try:
            tables[parse_release(name)] = name
        except ReleaseError:
            continue
    if not tables:
        raise ReleaseError("no SGLang flag tables are available", "Check the collection's data/sglang_flags folder.")
    if wanted in tables:
        return tables[wanted]
    oldest, newest = min(tables), max(tables)
    if wanted < oldest:
        raise ReleaseError("SGLang %s is older than the oldest bundled flag table (%s)"
                           % (format_release(wanted), tables[oldest]),
                           "Install SGLang %s or newer (the --config file needs 0.5.9+)." % tables[oldest])
    if wanted > newest:
        raise ReleaseError("no flag table for SGLang %s; the newest bundled one is %s"
                           % (format_release(wanted), tables[newest]),
                           "Dump one with tools/dev/flags/dump_flags.py from a venv with that release installed, and add "
                           "it to data/sglang_flags/.")
    return tables[max(r for r in tables if r < wanted)]


def release_sort_key(text: str) -> Tuple[int, int, int]:
    """Sort key of a release string; anything unparsable sorts first."""
    try:
        return parse_release(text)
    except ReleaseError:
        return (0, 0, 0)
