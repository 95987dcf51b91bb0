# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a release of SGLang lives on a host: ``<root>/venvs/<version>`` (``standin-<version>`` for the stand-in).

Why one function: the sglang_install role creates the venv there, and the sglang_server role must find it again
when sglang_install did not run in the same play (no ``sglang_install_venv`` fact). Written twice, the two
formulas could drift apart and the server would start a venv nobody installed. The stand-in gets a name of its
own so it is never taken for a real install of the same release.

Runs on the controller (filter ``gpufleet.sglang.sglang_venv``); standard library only.
"""

from __future__ import annotations

from typing import Any

STANDIN_SOURCE = "standin"


def sglang_venv(root: Any, source: Any, version: Any) -> str:
    """The venv of ``version`` from ``source`` (``pypi`` or ``standin``) under ``root``, as text, the root unchanged."""
    return "%s/venvs/%s%s" % (root, "standin-" if source == STANDIN_SOURCE else "", version)
