"""Log lines in SGLang's formats, written line by line and flushed at once.

SGLang's own lines are ``[YYYY-mm-dd HH:MM:SS<prefix>] message`` with no level name
(``utils/common.py::configure_logger``); scheduler lines carry `` TP0``-style prefixes
for the parallel dimensions larger than one. Uvicorn's lines, as SGLang configures
them, read ``[YYYY-mm-dd HH:MM:SS] INFO:     message``. Journald and the launch
module read these, so every record is flushed as soon as it is written.
"""

import logging
import sys
from typing import Optional, TextIO

DATEFMT = "%Y-%m-%d %H:%M:%S"
SGLANG_FORMAT = "[%(asctime)s%(prefix)s] %(message)s"


class PrefixFormatter(logging.Formatter):
    """SGLang's format with an optional per-record rank prefix (`` TP0``)."""

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "prefix"):
            record.prefix = ""
        return super().format(record)


class UvicornFormatter(logging.Formatter):
    """Uvicorn's ``levelprefix``: the level name and a colon, padded to nine columns."""

    def format(self, record: logging.LogRecord) -> str:
        record.levelprefix = (record.levelname + ":").ljust(9)
        return super().format(record)


def _handler(stream: TextIO, formatter: logging.Formatter) -> logging.Handler:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    return handler


def level_number(name: Optional[str]) -> int:
    """``--log-level`` text to a logging level (SGLang accepts the logging names)."""
    return getattr(logging, (name or "info").upper(), logging.INFO)


def configure_basic(log_level: Optional[str]) -> None:
    """What ``prepare_server_args`` does: basicConfig to stderr with SGLang's format.

    SGLang looks the level up with ``getattr(logging, log_level.upper())``, so a name logging does not know
    fails there with AttributeError (``module 'logging' has no attribute 'VERBOSE'``), as here.
    """
    level = getattr(logging, (log_level or "info").upper())
    logging.basicConfig(level=level, format="[%(asctime)s] %(message)s", datefmt=DATEFMT, force=True)


def configure_server(log_level: Optional[str], http_log_level: Optional[str]) -> None:
    """What ``configure_logger`` and uvicorn do at launch: SGLang lines to stdout, uvicorn's as uvicorn."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(_handler(sys.stdout, PrefixFormatter(SGLANG_FORMAT, datefmt=DATEFMT)))
    root.setLevel(level_number(log_level))
    http_level = level_number(http_log_level or log_level)
    for name, stream, fmt in (
            ("uvicorn.error", sys.stderr, "[%(asctime)s] %(levelprefix)s %(message)s"),
            ("uvicorn.access", sys.stdout, "[%(asctime)s] %(levelprefix)s %(message)s")):
        log = logging.getLogger(name)
        for old in list(log.handlers):
            log.removeHandler(old)
        log.addHandler(_handler(stream, UvicornFormatter(fmt, datefmt=DATEFMT)))
        log.setLevel(http_level)
        log.propagate = False


def rank_prefix(tp_rank: int, tp_size: int, pp_rank: int = 0, pp_size: int = 1) -> str:
    """`` PP1 TP0``-style prefix: only the dimensions larger than one appear."""
    prefix = ""
    if pp_size > 1:
        prefix += f" PP{pp_rank}"
    if tp_size > 1:
        prefix += f" TP{tp_rank}"
    return prefix


SGLANG = logging.getLogger("sglang")
UVICORN = logging.getLogger("uvicorn.error")
ACCESS = logging.getLogger("uvicorn.access")


def info(message: str, prefix: str = "") -> None:
    """An SGLang info line (optionally for one rank)."""
    SGLANG.info(message, extra={"prefix": prefix})


def warning(message: str, prefix: str = "") -> None:
    """An SGLang warning line; the format has no level name, as in SGLang."""
    SGLANG.warning(message, extra={"prefix": prefix})


def error(message: str, prefix: str = "") -> None:
    """An SGLang error line (tracebacks ride in the message, newlines included)."""
    SGLANG.error(message, extra={"prefix": prefix})
