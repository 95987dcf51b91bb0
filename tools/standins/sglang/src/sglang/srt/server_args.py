"""``sglang.srt.server_args`` of the stand-in: ``ServerArgs`` and ``prepare_server_args``.

Same import path and call shape as SGLang, so a preflight that runs
``prepare_server_args(argv)`` (and, on 0.5.19+, ``resolve_once()`` and
``check_server_args()``) gets the parse errors and rule outcomes of the release the
stand-in plays. Up to 0.5.18 the rules ran inside ``prepare_server_args``
(``__post_init__``); the stand-in keeps that difference.
"""

import argparse
import logging
from typing import Any, Dict, List, Optional

from sglang._standin import flagtable, logs, releases, rules, settings
from sglang._standin.profile import load_profile, model_from_path

logger = logging.getLogger(__name__)

# Shown first in the repr, like the field order of SGLang's ServerArgs.
LEADING_FIELDS = ("model_path", "tokenizer_path", "tokenizer_mode", "host", "port")
HIDDEN = ("help", "config")


class ServerArgs:
    """The parsed (and, after ``resolve_once``, resolved) launch arguments."""

    def __init__(self, **fields: Any):
        self.__dict__.update(fields)
        self._resolved = False
        self._release = settings.release()
        self._launch_command = ""
        self._profile: Optional[Dict[str, Any]] = None

    @classmethod
    def from_cli_args(cls, args: argparse.Namespace) -> "ServerArgs":
        """Build from an argparse namespace, as SGLang does."""
        return cls(**{k: v for k, v in vars(args).items() if k not in HIDDEN})

    def fields(self) -> Dict[str, Any]:
        """The public fields (argparse destinations plus what resolution added)."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    @property
    def profile(self) -> Dict[str, Any]:
        """The hardware/pace profile this process plays, the model's own config.json applied."""
        if self._profile is None:
            self._profile = model_from_path(load_profile(), self.__dict__.get("model_path"))
        return self._profile

    def _apply(self, lines: List[Any]) -> None:
        for level, message in lines:
            getattr(logger, level)(message)

    def resolve_once(self) -> None:
        """Run the resolution rules once; raises SGLang's errors, logs SGLang's adjustments."""
        if self._resolved:
            return
        state = self.__dict__
        self._apply(rules.resolve(state, self._release, self.profile))
        self._resolved = True

    def check_server_args(self) -> None:
        """Cross-flag checks that SGLang runs after resolution."""
        self._apply(rules.check(self.__dict__, self._release))

    def resolved_dict(self) -> Dict[str, Any]:
        """All fields, secrets included, as ``/server_info`` returns them."""
        return self.fields()

    def url(self) -> str:
        """Base URL of the HTTP server (IPv6 hosts in brackets)."""
        host = self.__dict__.get("host", "127.0.0.1")
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.__dict__.get('port', 30000)}"

    def __repr__(self) -> str:
        fields = self.fields()
        order = [k for k in LEADING_FIELDS if k in fields] + sorted(k for k in fields if k not in LEADING_FIELDS)
        return "ServerArgs(" + ", ".join(f"{k}={fields[k]!r}" for k in order) + ")"


def prepare_server_args(argv: List[str]) -> ServerArgs:
    """Parse ``argv`` with the release's parser (``prog="sglang serve"``); exit 2 on argparse errors."""
    release = settings.release()
    parser = flagtable.build_parser(release)
    if "--config" in argv:
        argv = flagtable.ConfigArgumentMerger(parser).merge_config_with_args(list(argv))
    raw_args = parser.parse_args(argv)
    logs.configure_basic(getattr(raw_args, "log_level", "info"))
    server_args = ServerArgs.from_cli_args(raw_args)
    server_args._launch_command = " ".join(argv)  # pylint: disable=protected-access
    if releases.validates_in_prepare(release):
        server_args.resolve_once()  # __post_init__ in <= 0.5.18
    return server_args
