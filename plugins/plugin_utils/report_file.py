# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing a report file on the controller the way ``ansible.builtin.copy`` with ``content`` would, without a
module run.

Why: rollout.yml writes one JSON report per host and a summary, on the controller. Through ``copy`` each is an
AnsiballZ module run on the local connection (about 1-4 s a batch on a loaded 2-core controller, more than
the converged check of the hosts themselves); written here, in the action plugin's own process, it is a few
milliseconds. The semantics are copy's: changed only when the content or mode differs, nothing written in
check mode, a before/after diff, an atomic replace, and a missing folder is an error (copy does not make it).

Runs on the controller (action plugin ``gpufleet.sglang.report_file``); standard library only.
"""

from __future__ import annotations

import os
import stat
import tempfile
from typing import Any, Dict, Optional


class ReportFileError(ValueError):
    """The report cannot be written where it was asked to go."""


def parse_mode(mode: Any) -> int:
    """An octal mode given as text (``"0644"``) or as a number already (0o644)."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        return mode
    text = str(mode).strip()
    if not text or any(ch not in "01234567" for ch in text) or len(text) > 4:
        raise ReportFileError("mode must be octal like \"0644\", not %r" % (mode,))
    return int(text, 8)


def _read(dest: str) -> Optional[str]:
    try:
        with open(dest, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_report(dest: str, content: str, mode: Any = "0644", check_mode: bool = False) -> Dict[str, Any]:
    """Put content at dest with mode; say whether that changed anything, with the diff of the content."""
    folder = os.path.dirname(dest) or "."
    if not os.path.isdir(folder):
        raise ReportFileError("Destination directory %s does not exist" % folder)
    wanted = parse_mode(mode)
    before = _read(dest)
    same_mode = before is not None and stat.S_IMODE(os.stat(dest).st_mode) == wanted
    changed = before != content or not same_mode
    result: Dict[str, Any] = {"changed": changed, "dest": dest,
                              "diff": {"before": before or "", "after": content, "before_header": dest, "after_header": dest}}
    if changed and not check_mode:
        write_atomically(dest, content, wanted)
    return result


def write_atomically(dest: str, content: str, mode: int) -> None:
    """Write a controller-side file whole or not at all: a temporary file beside it, renamed in.

    Hosts of one play write their reports (or dump their flag tables) at once, and a reader must never see half
    a file.
    """
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest) or ".", prefix=".%s." % os.path.basename(dest))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
