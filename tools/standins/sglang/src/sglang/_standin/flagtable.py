"""Build SGLang's own argparse parser from a dumped flag table, and merge ``--config`` files.

The tables (``flag_tables/<release>.json``) list every argparse action of the parser
``prepare_server_args()`` builds in that release. Rebuilding a real
``argparse.ArgumentParser`` from them gives SGLang's exact argparse behaviour for
free: prefix abbreviations, ambiguity errors, ``unrecognized arguments``, ``prog``,
exit status 2. Only the custom action classes and type functions are re-created
here, with the names SGLang gives them (argparse prints a type's ``__name__`` in
``invalid <type> value`` errors).
"""

import argparse
import json
import logging
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from . import settings

logger = logging.getLogger("sglang.srt.arg_groups.argparse_actions")

STANDIN_NOTE = ("SGLang STAND-IN {release}: a test and rehearsal backend that parses, logs and "
                "serves like SGLang without a GPU. It is not an inference server.")

# Replacement hints of deprecated flags, as SGLang's Deprecated*Action classes print them.
# The tables carry no help text, so these few are kept by hand; others get no hint.
NEW_FLAG_HINTS = {
    "--disable-cuda-graph": "--cuda-graph-backend-{decode,prefill}=disabled",
    "--enable-dp-attention": "--attn-dp-size <dp-size>",
    "--enforce-piecewise-cuda-graph": "--cuda-graph-backend-prefill=tc_piecewise",
    "--disable-piecewise-cuda-graph": "--cuda-graph-backend-prefill=disabled",
    "--enable-breakable-cuda-graph": "--cuda-graph-backend-prefill=breakable",
    "--cuda-graph-max-bs": "--cuda-graph-max-bs-decode",
    "--cuda-graph-bs": "--cuda-graph-bs-decode",
    "--piecewise-cuda-graph-max-tokens": "--cuda-graph-max-bs-prefill",
    "--piecewise-cuda-graph-tokens": "--cuda-graph-bs-prefill",
}

# Values stored by DeprecatedStoreConstAction flags (legacy booleans mapped onto new settings).
CONST_VALUES = {
    "--enforce-piecewise-cuda-graph": "tc_piecewise",
    "--disable-piecewise-cuda-graph": "disabled",
    "--enable-breakable-cuda-graph": "breakable",
}


def table_path(release: str) -> Path:
    """The flag table file used for ``release``: ``SGLANG_STANDIN_FLAG_TABLE`` when set (a release that exists
    nowhere else, to rehearse a new SGLang release on day one), else the release's own or nearest older table."""
    override = settings.get("flag_table")
    if override:
        return Path(override)
    return settings.TABLE_DIR / f"{settings.table_release(release)}.json"


def load_table(release: str) -> Dict[str, Any]:
    """Parsed flag table for ``release``."""
    return json.loads(table_path(release).read_text(encoding="utf-8"))


# --- type functions, named like SGLang's -------------------------------------------------


def human_readable_int(value: str) -> int:
    """SI (k, M, G, T) and IEC (Ki, Mi, Gi, Ti) suffixes, as SGLang's ``human_readable_int``."""
    value = value.strip()
    si_mult = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec_mult = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in iec_mult:
            if "." in number:
                raise ValueError(f"Decimals are not allowed with binary suffixes like {suffix}")
            return int(number) * iec_mult[suffix]
        return int(float(number) * si_mult[suffix])
    return int(value)


def loads(value: str) -> Any:
    """``json.loads`` under the name argparse shows in errors."""
    return json.loads(value)


def json_list_type(value: str) -> List[Any]:
    """A JSON list given as one argument."""
    parsed = json.loads(value)
    if not isinstance(parsed, list):
        raise ValueError("not a JSON list")
    return parsed


def nullable_str(value: str) -> Optional[str]:
    """Empty or 'None' means unset."""
    if not value or value == "None":
        return None
    return value


def parse_cuda_graph_backend_arg(value: str) -> str:
    """SGLang's type function (0.5.22+): the retired backend is refused before argparse checks the choices."""
    if value == "tc_piecewise":
        raise argparse.ArgumentTypeError("tc_piecewise was removed; select breakable, full, or disabled")
    return value


def parse_cuda_graph_config_arg(value: str) -> Dict[str, Any]:
    """``--cuda-graph-config '<json>'``."""
    parsed = json.loads(value)
    if not isinstance(parsed, dict):
        raise ValueError("not a JSON object")
    return parsed


TYPES: Dict[Optional[str], Optional[Callable[[str], Any]]] = {
    None: None, "str": str, "int": int, "float": float, "loads": loads,
    "human_readable_int": human_readable_int, "json_list_type": json_list_type,
    "nullable_str": nullable_str, "parse_cuda_graph_backend_arg": parse_cuda_graph_backend_arg,
    "parse_cuda_graph_config_arg": parse_cuda_graph_config_arg,
}


# --- action classes, behaving like sglang/srt/arg_groups/argparse_actions.py -------------


def print_deprecated_warning(message: str) -> None:
    """SGLang logs these in yellow; before logging is configured they reach stderr bare."""
    logger.warning("\033[1;33m%s\033[0m", message)


def _deprecation_text(option_string: Optional[str]) -> str:
    hint = NEW_FLAG_HINTS.get(option_string or "")
    replacement = f" Use '{hint}' instead." if hint else ""
    return f"'{option_string}' is deprecated and will be removed in a future release.{replacement}"


class DeprecatedAction(argparse.Action):
    """A removed no-op flag: accepted with a warning."""

    def __init__(self, option_strings, dest, nargs=0, **kwargs):
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print_deprecated_warning(
            f"The command line argument '{option_string}' is deprecated and will be removed in future versions.")


class DeprecatedStoreTrueAction(argparse.Action):
    """Deprecated flag that still stores True and prints a warning."""

    def __init__(self, option_strings, dest, nargs=0, default=False, **kwargs):
        super().__init__(option_strings, dest, nargs=nargs, default=default, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print_deprecated_warning(_deprecation_text(option_string))
        setattr(namespace, self.dest, True)


class DeprecatedStoreConstAction(argparse.Action):
    """Deprecated boolean that stores a fixed value into a newer setting."""

    def __call__(self, parser, namespace, values, option_string=None):
        print_deprecated_warning(_deprecation_text(option_string))
        setattr(namespace, self.dest, CONST_VALUES.get(option_string or "", True))


class DeprecatedAliasStoreAction(argparse.Action):
    """Deprecated alias that stores its value and prints a warning."""

    def __call__(self, parser, namespace, values, option_string=None):
        print_deprecated_warning(_deprecation_text(option_string))
        setattr(namespace, self.dest, values)


class LoRAPathAction(argparse.Action):
    """``--lora-paths a b {json}``: JSON items become dicts."""

    def __call__(self, parser, namespace, values, option_string=None):
        paths: List[Any] = []
        for item in values or []:
            item = item.strip()
            paths.append(json.loads(item) if item.startswith("{") and item.endswith("}") else item)
        setattr(namespace, self.dest, paths)


ACTIONS: Dict[str, Any] = {
    "_StoreAction": "store", "_StoreTrueAction": "store_true",
    "BooleanOptionalAction": argparse.BooleanOptionalAction,
    "DeprecatedAction": DeprecatedAction, "DeprecatedStoreTrueAction": DeprecatedStoreTrueAction,
    "DeprecatedStoreConstAction": DeprecatedStoreConstAction,
    "DeprecatedAliasStoreAction": DeprecatedAliasStoreAction, "LoRAPathAction": LoRAPathAction,
}


def _add_action(parser: argparse.ArgumentParser, spec: Dict[str, Any]) -> None:
    """Register one table row on ``parser``."""
    kind = spec["action"]
    if kind == "_HelpAction":
        return  # argparse adds -h/--help itself
    action = ACTIONS.get(kind, "store")
    kwargs: Dict[str, Any] = {"dest": spec["dest"], "action": action}
    if kind == "BooleanOptionalAction":
        # The table lists both spellings; argparse derives --no-x from --x.
        opts = [o for o in spec["opts"] if not o.startswith("--no-")]
        kwargs["default"] = spec["default"]
    else:
        opts = spec["opts"]
        if spec["default"] != argparse.SUPPRESS:
            kwargs["default"] = spec["default"]
        else:
            kwargs["default"] = argparse.SUPPRESS
    if kind not in ("_StoreTrueAction", "BooleanOptionalAction", "DeprecatedStoreTrueAction", "DeprecatedAction"):
        if spec["nargs"] not in (None, 0):
            kwargs["nargs"] = spec["nargs"]
        elif spec["nargs"] == 0:
            kwargs["nargs"] = 0
        if TYPES.get(spec["type"]) is not None:
            kwargs["type"] = TYPES[spec["type"]]
        if spec["choices"]:
            kwargs["choices"] = spec["choices"]
    if spec["required"]:
        kwargs["required"] = True
    parser.add_argument(*opts, **kwargs)


def build_parser(release: str) -> argparse.ArgumentParser:
    """The argparse parser of ``release``, as ``prepare_server_args`` builds it."""
    table = load_table(release)
    parser = argparse.ArgumentParser(
        prog=table.get("prog") or "sglang", allow_abbrev=table.get("allow_abbrev", True),
        description=STANDIN_NOTE.format(release=release))
    for spec in table["actions"]:
        _add_action(parser, spec)
    return parser


def serve_only(release: str) -> Dict[str, Dict[str, Any]]:
    """What ``sglang serve`` takes off argv itself in ``release`` (``--model-type``, positional model)."""
    return {spec["action"]: spec for spec in load_table(release).get("serve_only", [])}


# --- --config file.yaml, as sglang/srt/server_args_config_parser.py -----------------------


class ConfigArgumentMerger:  # pylint: disable=too-few-public-methods
    """Turn a YAML config into argv placed before the command line (CLI > config > defaults)."""

    def __init__(self, parser: argparse.ArgumentParser):
        self.store_true_actions = [a.dest for a in parser._actions  # pylint: disable=protected-access
                                   if isinstance(a, argparse._StoreTrueAction)]  # pylint: disable=protected-access
        plain = (argparse._StoreTrueAction, argparse._StoreAction)  # pylint: disable=protected-access
        supported = {a.dest for a in parser._actions if isinstance(a, plain)}  # pylint: disable=protected-access
        self.unsupported_actions = {
            a.dest: a for a in parser._actions  # pylint: disable=protected-access
            if a.option_strings and not isinstance(a, plain) and a.dest not in supported
            and not {"--config", "--help", "-h"} & set(a.option_strings)}

    def merge_config_with_args(self, cli_args: List[str]) -> List[str]:
        """Return ``config args + argv without --config FILE``."""
        path = self._extract_config_file_path(cli_args)
        if not path:
            return cli_args
        config_args = self._convert_config_to_args(self._parse_yaml_config(path))
        index = cli_args.index("--config")
        return config_args + cli_args[:index] + cli_args[index + 2:]

    @staticmethod
    def _extract_config_file_path(args: List[str]) -> Optional[str]:
        indices = [i for i, arg in enumerate(args) if arg == "--config"]
        if len(indices) > 1:
            raise ValueError("Multiple config files specified! Only one allowed.")
        if not indices:
            return None
        if indices[0] == len(args) - 1:
            raise ValueError("No config file specified after --config flag!")
        return args[indices[0] + 1]

    @staticmethod
    def _parse_yaml_config(file_path: str) -> Dict[str, Any]:
        import yaml  # pylint: disable=import-outside-toplevel  # only --config needs PyYAML
        path = Path(file_path)
        if path.suffix.lower() not in [".yaml", ".yml"]:
            raise ValueError(f"Config file must be YAML format, got: {path.suffix}")
        if not path.exists():
            raise ValueError(f"Config file not found: {file_path}")
        with open(file_path, "r", encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError("Config file must contain a dictionary at root level")
        return data

    def _convert_config_to_args(self, config: Dict[str, Any]) -> List[str]:
        args: List[str] = []
        for key, value in config.items():
            key_norm = key.replace("-", "_")
            if key_norm in self.unsupported_actions:
                action = self.unsupported_actions[key_norm]
                raise ValueError(f"Unsupported config option '{key_norm}' with action '{action.__class__.__name__}'")
            if isinstance(value, bool):
                if key_norm in self.store_true_actions:
                    if value:
                        args.append(f"--{key}")
                else:
                    args.extend([f"--{key}", str(value).lower()])
            elif isinstance(value, list):
                if value:
                    args.append(f"--{key}")
                    args.extend(str(item) for item in value)
            elif isinstance(value, dict):
                args.extend([f"--{key}", json.dumps(value)])
            else:
                args.extend([f"--{key}", str(value)])
        return args
