# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for gpufleet.sglang.sglang_preflight: load the flag table on the controller.

Why an action plugin: AnsiballZ ships only Python files to the target, and the flag tables are JSON data of the
collection (``data/sglang_flags/<release>.json``). This plugin loads the table of the requested release (and,
for keys that release lacks, the history of every bundled release), then:

* without ``venv`` and ``dest``: lints on the controller with the same module_utils the module uses, and never
  contacts the host (``playbooks/preflight.yml`` relies on it);
* otherwise: runs the module on the target with the table, so the real parser and the config file are checked
  and written where SGLang runs. Secret flags travel in the no_log ``secret_args`` option only.
"""

from __future__ import annotations

import json
import os

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.lint import lint_server_args
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import ReleaseError, select_table_release
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import build_history, normalise_key
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.preflight import (
    ARGUMENT_SPEC,
    build_result,
    merge_secret_args,
    release_error_result,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import split_secret_args

MODULE = "gpufleet.sglang.sglang_preflight"


def collection_tables_dir() -> str:
    """data/sglang_flags of the collection this plugin belongs to (plugins/action/ -> collection root)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return os.path.join(root, "data", "sglang_flags")


def available_releases(directory: str) -> list:
    """Releases that have a <release>.json table in directory."""
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise ReleaseError("cannot read the flag tables in %s: %s" % (directory, exc.strerror),
                           "Check tables_dir, or reinstall the collection.") from None
    return sorted(name[:-5] for name in names if name.endswith(".json"))


def load_table(directory: str, release: str) -> dict:
    """One bundled table, as a dict; a missing or broken file is a ReleaseError with the fix."""
    path = os.path.join(directory, release + ".json")
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise ReleaseError("cannot load the flag table %s: %s" % (path, exc),
                           "Regenerate it with tools/dev/flags/dump_flags.py.") from None


def table_with_history(directory: str, release: str, server_args: object) -> dict:
    """The release's table, plus the history of the keys it lacks (so removed flags get their replacement)."""
    table = load_table(directory, release)
    options = set()
    if isinstance(server_args, dict):
        for key in server_args:
            option, dummy = normalise_key(key)
            if option:
                options.add(option)
    known = {option for action in table.get("actions", ()) for option in action.get("opts") or ()}
    missing = options - known
    if missing:
        tables = {name: load_table(directory, name) for name in available_releases(directory)}
        table = dict(table, history=build_history(tables, missing))
    return table


class ActionModule(ActionBase):
    """Lint on the controller; run the module on the target only for the real parser or the config file."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        plain, secret = split_secret_args(args["server_args"])
        secret.update(args.get("secret_args") or {})

        table = args.get("flag_table")
        if not table:
            directory = args.get("tables_dir") or collection_tables_dir()
            try:
                release = select_table_release(args["sglang_version"], available_releases(directory))
                table = table_with_history(directory, release, args["server_args"])
            except ReleaseError as exc:
                result.update(release_error_result(exc, args["sglang_version"]))
                return result

        if not args.get("venv") and not args.get("dest"):
            lint = lint_server_args(merge_secret_args(plain, secret), table, args["sglang_version"],
                                    table.get("history"), args.get("facts"), secret_names=list(secret))
            result.update(build_result(lint, fail_on=args["fail_on"]))
            return result

        module_args = dict(args, server_args=plain, secret_args=secret, flag_table=table, tables_dir=None)
        module_result = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        module_result.pop("invocation", None)  # it would repeat the whole flag table
        result.update(module_result)
        return result
