"""Settings of the stand-in: environment variables first, then an install-time file.

Every knob has one name, ``SGLANG_STANDIN_<NAME>``. The same knobs can be fixed at
install time in ``<venv prefix>/sglang-standin.json`` (keys are the lower-case names
without the prefix, e.g. ``{"release": "0.5.12"}``), so a venv can "be" one SGLang
release without any environment. The environment always wins over the file, which
lets a systemd environment file override an installed default.
"""

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

PREFIX = "SGLANG_STANDIN_"
INSTALL_FILE_NAME = "sglang-standin.json"
TABLE_DIR = Path(__file__).resolve().parent / "flag_tables"
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
DEFAULT_PROFILE = "a6000x2-27b-nextn"

_CACHE: Dict[str, Dict[str, Any]] = {}


def install_file() -> Path:
    """Where an installer may write the install-time settings (the venv prefix)."""
    return Path(sys.prefix) / INSTALL_FILE_NAME


def _install_settings() -> Dict[str, Any]:
    """Read the install-time file once; a missing or broken file means no settings."""
    if "install" not in _CACHE:
        try:
            data = json.loads(install_file().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        _CACHE["install"] = data if isinstance(data, dict) else {}
    return _CACHE["install"]


def get(name: str, default: Optional[str] = None) -> Optional[str]:
    """One setting as text: ``SGLANG_STANDIN_<NAME>`` beats the install file beats ``default``."""
    value = os.environ.get(PREFIX + name.upper())
    if value is not None and value != "":
        return value
    value = _install_settings().get(name.lower())
    if value is not None:
        return str(value)
    return default


def get_float(name: str, default: float) -> float:
    """A numeric setting; a malformed value is an error worth stopping for (tests rely on it)."""
    raw = get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise SystemExit(f"sglang stand-in: {PREFIX}{name.upper()}={raw!r} is not a number") from exc


def version_key(name: str) -> Tuple[int, ...]:
    """Sort key for '0.5.12' style releases (numeric, so 0.5.9 < 0.5.10)."""
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def available_tables() -> List[str]:
    """Releases that have a flag table in the package, oldest first."""
    names = [p.stem for p in TABLE_DIR.glob("*.json")]
    return sorted(names, key=version_key)


def release() -> str:
    """The SGLang release this process plays (``SGLANG_STANDIN_RELEASE``; default: newest table)."""
    tables = available_tables()
    if not tables:
        raise SystemExit(f"sglang stand-in: no flag tables found in {TABLE_DIR}")
    return get("release", tables[-1]) or tables[-1]


def table_release(wanted: str) -> str:
    """The table used for ``wanted``: its own, else the newest older one (undumped releases).

    The flag tables were dumped for some releases only; a release in between has
    the flags of the table before it plus changes we cannot know, so the closest
    older table is the honest approximation.
    """
    tables = available_tables()
    older = [t for t in tables if version_key(t) <= version_key(wanted)]
    if not older:
        raise SystemExit(f"sglang stand-in: release {wanted} is older than every flag table ({', '.join(tables)})")
    return older[-1]


def time_scale() -> float:
    """Factor applied to every simulated duration (startup phases, fault delays, pacing)."""
    return max(get_float("time_scale", 1.0), 0.0)


def pace_scale() -> float:
    """Factor applied to token pacing only; defaults to the time scale."""
    return max(get_float("pace_scale", time_scale()), 1e-6)
