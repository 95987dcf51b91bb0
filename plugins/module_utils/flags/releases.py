# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang release numbers: strict parsing, explicit mapping of other versions, ranges, table selection.

Why strict: a release string decides which flags and rules apply. ``0.5.23foo`` used to pass as 0.5.23, and a
pre-release such as ``0.5.24rc1`` has flags that no release has, so guessing is worse than refusing. Accepted
as they are: ``X.Y.Z``, ``vX.Y.Z`` and ``X.Y.Z.postN`` (a post release keeps its release's rules; it gets a
flag table of its own when one was dumped). A pre-release, dev or local version (``0.5.24rc1``,
``0.5.24.dev3``, ``0.5.23+cu130``) is linted only when the operator maps it to a release
(``sglang_server_release_map``); anything else is refused with the reason.

Standard library only: modules ship this file to the target.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import display

_RELEASE_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:\.post(\d+))?$")
_PREFIX_RE = re.compile(r"^v?\d+\.\d+\.\d+")
_PRE_RE = re.compile(r"^[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*", re.IGNORECASE)
_DEV_RE = re.compile(r"[-_.]?dev[-_.]?\d*", re.IGNORECASE)
MAP_VARIABLE = "sglang_server_release_map"
VERSION_VARIABLE = "sglang_install_version"


class ReleaseError(ValueError):
    """The requested SGLang release cannot be linted (not a version, or outside the bundled tables)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def _map_hint(text: str, what: str) -> str:
    return ("%s is not an SGLang release, so no release's flags and rules can be assumed for it. Map it to the release "
            "whose flags it has, e.g. %s: {'%s': '0.5.23'}, or install a release (%s)."
            % (what, MAP_VARIABLE, text, VERSION_VARIABLE))


def release_problem(text: str) -> Tuple[str, str]:
    """(message, hint) saying why ``text`` is not a release number; the caller knows it does not parse."""
    shown = display(text)
    prefix = _PREFIX_RE.match(text)
    if not prefix:
        return ("SGLang release %s is not a release number such as '0.5.23'" % shown,
                "Give the version pip installs (pip show sglang), quoted in YAML: %s: '0.5.23'." % VERSION_VARIABLE)
    rest = text[prefix.end():]
    if "+" in rest:
        return ("SGLang version %s carries a local version label (%s): a build of its own" % (shown, rest[rest.index("+"):]),
                _map_hint(text, "A local build"))
    if _PRE_RE.match(rest):
        return ("SGLang version %s is a pre-release" % shown, _map_hint(text, "A pre-release"))
    if _DEV_RE.search(rest):
        return ("SGLang version %s is a development build" % shown, _map_hint(text, "A development build"))
    return ("SGLang release %s is not a release number such as '0.5.23': %s follows the release number"
            % (shown, display(rest)),
            "Give the version pip installs (pip show sglang); anything else needs an explicit mapping in %s." % MAP_VARIABLE)


def release_key(text: Any) -> Tuple[int, int, int, int]:
    """'0.5.23' -> (0, 5, 23, 0); '0.5.23.post1' -> (0, 5, 23, 1). Raises ReleaseError for anything else."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise ReleaseError("the SGLang release must be a string such as '0.5.23', not %s" % display(text),
                           "Quote it in YAML: %s: '0.5.23'." % VERSION_VARIABLE)
    match = _RELEASE_RE.match(text.strip())
    if not match:
        raise ReleaseError(*release_problem(text.strip()))
    return int(match.group(1)), int(match.group(2)), int(match.group(3)), int(match.group(4) or 0)


def parse_release(text: Any) -> Tuple[int, int, int]:
    """'0.5.23', 'v0.5.23' or '0.5.23.post1' -> (0, 5, 23): the release whose rules apply."""
    return release_key(text)[:3]


def format_release(release: Tuple[int, ...]) -> str:
    """(0, 5, 23) -> '0.5.23'; (0, 5, 23, 1) -> '0.5.23.post1'."""
    text = "%d.%d.%d" % tuple(release[:3])
    if len(release) > 3 and release[3]:
        text += ".post%d" % release[3]
    return text


def map_release(text: Any, release_map: Optional[Mapping[str, Any]] = None) -> Tuple[str, Optional[str]]:
    """The release to lint for a version string: (release, the original when a mapping applied, else None).

    Only an exact entry of ``release_map`` maps a version; its target must itself be a release. Everything
    else is parsed strictly (ReleaseError with the reason and the fix).
    """
    if isinstance(text, str) and release_map and text.strip() in release_map:
        target = release_map[text.strip()]
        try:
            return format_release(release_key(target)), text.strip()
        except ReleaseError:
            raise ReleaseError("%s maps %s to %s, which is not a release number such as '0.5.23'"
                               % (MAP_VARIABLE, display(text.strip()), display(target)),
                               "Map it to a release that has a flag table, e.g. '0.5.23'.") from None
    return format_release(release_key(text)), None


def in_release_range(release: Tuple[int, ...], since: Optional[str], until: Optional[str]) -> bool:
    """True when since <= release <= until (either bound may be None); post releases count as their release."""
    release = tuple(release[:3])
    if since is not None and release < parse_release(since):
        return False
    if until is not None and release > parse_release(until):
        return False
    return True


def _tables_by_key(available: Iterable[str]) -> dict:
    tables = {}
    for name in available:
        try:
            tables[release_key(name)] = name
        except ReleaseError:
            continue
    return tables


def exact_table(requested: str, available: Iterable[str]) -> Optional[str]:
    """The table dumped for exactly this release (post releases included), else None."""
    return _tables_by_key(available).get(release_key(requested))


def select_table_release(requested: Any, available: Iterable[str]) -> str:
    """Pick the flag table for a release: its own, else the nearest older dumped one.

    Releases between dumped tables (0.5.11, 0.5.13, 0.5.15-17, 0.5.21) changed few flags, and a flag that a
    release added is better reported as unknown than a removed one passed as valid; lint_server_args() says
    which table it used. Newer than every table there is no honest answer without the release's own table
    (the role dumps one from the host's SGLang), so that raises ReleaseError.
    """
    wanted = release_key(requested)
    tables = _tables_by_key(available)
    if not tables:
        raise ReleaseError("no SGLang flag tables are available", "Check the collection's data/sglang_flags folder.")
    if wanted in tables:
        return tables[wanted]
    oldest, newest = min(tables), max(tables)
    if wanted < oldest:
        raise ReleaseError("SGLang %s is older than the oldest bundled flag table (%s)"
                           % (format_release(wanted), tables[oldest]),
                           "Install SGLang %s or newer (the --config file needs 0.5.9+)." % tables[oldest])
    if wanted[:3] > newest[:3]:  # a post release of the newest one keeps its table, as releases in between do
        raise ReleaseError("no flag table for SGLang %s; the newest one known is %s"
                           % (format_release(wanted), tables[newest]),
                           "Run the deploy once with SGLang %s installed on the host: the sglang_server role then dumps "
                           "its table from the host's own parser into sglang_server_flag_tables_dir on the controller, "
                           "where this lint finds it." % format_release(wanted))
    return tables[max(r for r in tables if r < wanted)]


def nearest_known(release: Tuple[int, ...], known: Iterable[str]) -> Optional[str]:
    """The newest known release at or before ``release`` (whose rules apply to it), else the oldest known one."""
    keys = sorted(parse_release(name) for name in known if _RELEASE_RE.match(str(name)))
    if not keys:
        return None
    older = [key for key in keys if key <= tuple(release[:3])]
    return format_release(older[-1] if older else keys[0])


def release_sort_key(text: str) -> Tuple[int, int, int, int]:
    """Sort key of a release string; anything unparsable sorts first."""
    try:
        return release_key(text)
    except ReleaseError:
        return (0, 0, 0, 0)
