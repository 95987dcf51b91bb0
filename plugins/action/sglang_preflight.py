# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for gpufleet.sglang.sglang_preflight: find (or dump) the flag table on the controller.

Why an action plugin: AnsiballZ ships only Python files to the target, and the flag tables are JSON data of the
collection (``data/sglang_flags/<release>.json``). This plugin finds the table of the requested release (and,
for keys that release lacks, the history of every known release), then:

* without ``venv`` and ``dest``: lints on the controller with the same module_utils the module uses, and never
  contacts the host (``playbooks/preflight.yml`` relies on it);
* otherwise: runs the module on the target with the table, so the host check (SGLang's own parser and
  resolution) runs and the config file is written where SGLang runs. Secret flags travel in the no_log
  ``secret_args`` option only.

A release with no table of its own (one newer than this collection) gets one on day one: with ``venv`` given,
the module dumps it from the host's SGLang parser (flags/dump.py, as the shipped tables were made); it is kept
in ``tables_dir`` on the controller (never inside the installed collection) for every later run, and the
cross-flag rules of the nearest known release apply to it (docs/preflight.md#a-new-release-on-day-one).
"""

from __future__ import annotations

import json
import os

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.dump import to_text
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import count_findings, finding, sort_findings
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import (
    ReleaseError,
    exact_table,
    format_release,
    map_release,
    nearest_known,
    parse_release,
    release_key,
    select_table_release,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import FlagTable, FlagTableError, build_history, normalise_key
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.preflight import (
    ARGUMENT_SPEC,
    build_result,
    lint_for_host,
    merge_secret_args,
    release_error_result,
    report_lines,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import split_secret_args
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.report_file import write_atomically

MODULE = "gpufleet.sglang.sglang_preflight"
# What the collection's tarball ships: a dumped table must never be written among these.
SHIPPED_FOLDERS = ("data", "plugins", "roles", "playbooks", "meta", "docs")


def collection_root() -> str:
    """The collection this plugin belongs to (plugins/action/ -> collection root)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def collection_tables_dir() -> str:
    """data/sglang_flags of the collection this plugin belongs to."""
    return os.path.join(collection_root(), "data", "sglang_flags")


def inside_collection(directory: str) -> bool:
    """Whether a directory lies in what the installed collection ships (data/, plugins/, roles/...)."""
    real = os.path.realpath(directory)
    shipped = [os.path.join(collection_root(), name) for name in SHIPPED_FOLDERS]
    return any(real == folder or real.startswith(folder + os.sep) for folder in shipped)


def available_releases(directory: str, missing_ok: bool = False) -> list:
    """Releases that have a <release>.json table in directory."""
    try:
        names = os.listdir(directory)
    except OSError as exc:
        if missing_ok:
            return []
        raise ReleaseError("cannot read the flag tables in %s: %s" % (directory, exc.strerror),
                           "Check tables_dir, or reinstall the collection.") from None
    return sorted(name[:-5] for name in names if name.endswith(".json") and not name.startswith("."))


def load_table(directory: str, release: str) -> dict:
    """One table, as a dict; a missing or broken file is a ReleaseError with the fix."""
    path = os.path.join(directory, release + ".json")
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise ReleaseError("cannot load the flag table %s: %s" % (path, exc),
                           "Regenerate it with tools/dev/flags/dump_flags.py, or delete it so the next deploy dumps "
                           "it again.") from None


def known_tables(dumped_dir: str) -> dict:
    """release -> directory, for the bundled tables and those dumped from hosts (a dumped one never shadows)."""
    found = {name: dumped_dir for name in available_releases(dumped_dir, missing_ok=True)} if dumped_dir else {}
    found.update({name: collection_tables_dir() for name in available_releases(collection_tables_dir())})
    return found


def table_with_history(tables: dict, release: str, server_args: object, table: dict = None) -> dict:
    """The release's table, plus the history of the keys it lacks (so removed flags get their replacement)."""
    table = table if table is not None else load_table(tables[release], release)
    options = set()
    if isinstance(server_args, dict):
        for key in server_args:
            option, dummy = normalise_key(key)
            if option:
                options.add(option)
    known = {option for action in table.get("actions", ()) for option in action.get("opts") or ()}
    missing = options - known
    if missing:
        loaded = {name: load_table(directory, name) for name, directory in tables.items()}
        table = dict(table, history=build_history(loaded, missing))
    return table


def write_table(directory: str, table: dict) -> str:
    """Keep a dumped table as <directory>/<release>.json, atomically (hosts of one play may dump at once)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, format_release(release_key(table["sglang_version"])) + ".json")
    write_atomically(path, to_text(table), 0o644)
    return path


def add_findings(result: dict, extra: list, variable: str) -> None:
    """Put controller-side info findings into a module result (they never change its verdict)."""
    if not extra:
        return
    result["findings"] = sort_findings(list(extra) + list(result.get("findings") or []))
    result["summary"] = count_findings(result["findings"])
    result["report"] = report_lines(result["findings"], variable)


class ActionModule(ActionBase):
    """Lint on the controller; run the module on the target for the host check, the config file or a dump."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def _dump_on_host(self, args: dict, task_vars: dict) -> dict:
        """The flag table of the host's SGLang, from its own parser (the module's dump_table mode)."""
        module_args = {"server_args": {}, "sglang_version": args["sglang_version"], "venv": args["venv"],
                       "dump_table": True, "parser_timeout": args["parser_timeout"],
                       "service_env": args.get("service_env") or {}}
        dumped = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        if dumped.get("failed") or not isinstance(dumped.get("flag_table"), dict):
            raise ReleaseError(dumped.get("msg") or "the flag-table dump on the host returned no table",
                               "Check that SGLang imports in %s on the host." % args["venv"])
        return dumped["flag_table"]

    def _find_table(self, args: dict, plain: dict, task_vars: dict) -> tuple:
        """(table with history, rules_release or None, controller-side info findings)."""
        release, mapped_from = map_release(args["sglang_version"], args.get("release_map"))
        dumped_dir = args.get("tables_dir")
        if dumped_dir and inside_collection(dumped_dir):
            raise ReleaseError("tables_dir %s lies inside the installed collection (%s)" % (dumped_dir, collection_root()),
                               "Name a controller directory of your own in sglang_server_flag_tables_dir: the "
                               "collection's files are replaced when it is upgraded.")
        tables = known_tables(dumped_dir)
        bundled = available_releases(collection_tables_dir())
        extra = []
        name = exact_table(release, tables)
        table = None
        if name is None and args.get("venv") and not mapped_from:
            table = self._dump_on_host(args, task_vars)
            FlagTable(table)  # raises FlagTableError for anything that is not a table
            try:
                same = release_key(table["sglang_version"]) == release_key(release)
            except ReleaseError:
                same = False
            if not same:
                raise ReleaseError("the host's venv %s has SGLang %s, but the flags are for %s"
                                   % (args["venv"], table["sglang_version"], release),
                                   "Set sglang_install_version to the installed release, or install %s." % release)
            name = format_release(release_key(release))
            where = "kept in memory only: give tables_dir to keep it"
            if dumped_dir and not self._task.check_mode:
                where = "kept as %s" % write_table(dumped_dir, table)
                tables[name] = dumped_dir
            elif dumped_dir:
                where = "not written in check mode"
            extra.append(finding("info", "flag_table_dumped", None,
                                 "the collection ships no flag table for SGLang %s: it was dumped from the host's own "
                                 "parser (%s)" % (release, where)))
        elif name is None:
            name = select_table_release(release, tables)
        table = table_with_history(tables, name, plain, table)
        rules_release = None
        newest = max(bundled, key=release_key) if bundled else None
        if newest and release_key(release)[:3] > release_key(newest)[:3]:
            rules_release = nearest_known(parse_release(release), bundled)
        return table, rules_release, extra

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        plain, secret = split_secret_args(args["server_args"])
        secret.update(args.get("secret_args") or {})
        variable = args.get("variable") or "sglang_server_args"

        table = args.get("flag_table")
        rules_release = args.get("rules_release")
        extra = []
        if not table:
            try:
                table, found_rules, extra = self._find_table(args, plain, task_vars)
                rules_release = rules_release or found_rules
            except (ReleaseError, FlagTableError) as exc:
                if isinstance(exc, FlagTableError):
                    exc = ReleaseError("the flag table dumped on the host is not a flag table: %s" % exc,
                                       "Report this with the SGLang release installed.")
                result.update(release_error_result(exc, args["sglang_version"], args["fail_on"]))
                return result

        if not args.get("venv") and not args.get("dest"):
            params = dict(args, secret_args=secret, rules_release=rules_release)
            try:
                lint, dummy, model_extra = lint_for_host(merge_secret_args(plain, secret), table, params, os.environ)
            except ReleaseError as exc:
                result.update(release_error_result(exc, args["sglang_version"], args["fail_on"]))
                return result
            result.update(build_result(lint, fail_on=args["fail_on"], extra_findings=extra + model_extra,
                                       variable=variable))
            return result

        module_args = dict(args, server_args=plain, secret_args=secret, flag_table=table, tables_dir=None,
                           rules_release=rules_release)
        module_result = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        module_result.pop("invocation", None)  # it would repeat the whole flag table
        add_findings(module_result, extra, variable)
        result.update(module_result)
        return result
