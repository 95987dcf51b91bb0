# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flag lint: ``sglang_server_args`` against the flag table of an SGLang release.

Why it exists: SGLang refuses some flag combinations only when it starts, minutes after the working server was
stopped. This layer answers, before anything restarts, "would the installed SGLang accept these flags, and
would they do what the operator thinks?"

Shape (after community.docker's ``module_utils/compose_v2.py``): pure functions over data. The flag table of a
release is the dict that ``data/sglang_flags/<release>.json`` holds; the caller loads it (the action plugin, on
the controller) and passes it in, so this file runs unchanged in a module on the target: standard library only,
Python >= 3.9, no I/O.

``lint_server_args(server_args, table, release, history=None, facts=None) -> LintResult`` normalises the keys
(``tp_size``, ``tp-size``, ``--tp-size``), checks each value (flags/values.py), reports unknown, removed,
renamed and deprecated flags, and applies the release's cross-flag rules (flags/rules.py). Every problem is a
finding (flags/findings.py); nothing raises on bad input. Releases: flags/releases.py; tables: flags/table.py;
secrets: module_utils/secrets.py.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import close_matches, display, finding, sort_findings
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import (
    ReleaseError,
    format_release,
    in_release_range,
    parse_release,
    release_key,
    release_sort_key,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.rules import REPLACEMENTS, RULES
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import STORE_CLASSES, FlagTable, normalise_key, option_name
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.values import DROP, FALSE_WORDS, TRUE_WORDS, ValueChecker
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import redact, redact_args, secret_values


# ---------------------------------------------------------------------------------------------------------------------
# Rules

class RuleContext:
    """What a cross-flag rule sees: the values SGLang will get, the release, the table and host facts."""

    def __init__(self, release: Tuple[int, int, int], table: FlagTable, values: Mapping[int, Any],
                 facts: Optional[Mapping[str, Any]] = None, model: Optional[Mapping[str, Any]] = None,
                 draft_model: Optional[Mapping[str, Any]] = None, options: Optional[Mapping[str, Any]] = None,
                 variable: str = "sglang_server_args") -> None:
        self.release = release
        self.table = table
        self._values = values  # id(action) -> the operator's (normalised) value
        self.facts = dict(facts or {})
        self.model = dict(model) if model else None  # flags/model.py model_facts() of the model's config.json
        self.draft_model = dict(draft_model) if draft_model else None
        self.options = dict(options or {})
        self.variable = variable

    def ref(self, name: str) -> str:
        """How the operator names an option: sglang_server_args.tp_size."""
        return "%s.%s" % (self.variable, name) if self.variable else name

    def has(self, name: str) -> bool:
        return self.table.has(name)

    def given(self, name: str) -> bool:
        """Whether the operator set it (under any of its option names: tp_size and tensor_parallel_size alike)."""
        action = self.table.action(name)
        return action is not None and id(action) in self._values

    def get(self, name: str) -> Any:
        """The value SGLang will parse: the operator's, else the table's default (None if the option is absent)."""
        action = self.table.action(name)
        if action is not None and id(action) in self._values:
            return self._values[id(action)]
        return self.table.default(name)

    def on(self, name: str) -> bool:
        return bool(self.get(name))

    def fact_bool(self, name: str) -> Optional[bool]:
        """A host fact as True/False, None when unknown (facts often arrive as the strings 'true'/'false')."""
        value = self.facts.get(name)
        if isinstance(value, bool) or value is None:
            return value
        text = str(value).strip().lower()
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
        return None

    def choices(self, name: str) -> Optional[list]:
        action = self.table.action(name)
        return action.get("choices") if action else None

    @staticmethod
    def error(code: str, flag: str, message: str, hint: str = "") -> dict:
        return finding("error", code, flag, message, hint)

    @staticmethod
    def warning(code: str, flag: str, message: str, hint: str = "") -> dict:
        return finding("warning", code, flag, message, hint)

    @staticmethod
    def info(code: str, flag: str, message: str, hint: str = "") -> dict:
        return finding("info", code, flag, message, hint)


def replacement_for(name: str, release: Tuple[int, int, int], table: Optional[FlagTable] = None,
                    dest: Optional[str] = None) -> Optional[str]:
    """Advice for a removed or deprecated flag: curated (REPLACEMENTS), else an alias found through its dest."""
    for item in REPLACEMENTS.get(name, ()):
        if in_release_range(release, item.since, item.until):
            if item.flag is None:
                return "Drop it: %s." % item.note
            target = item.flag
            if item.value is not None:
                target = "%s: %s" % (item.flag, item.value if isinstance(item.value, str) else json.dumps(item.value))
            return "Use %s instead (%s)." % (target, item.note)
    if table is not None and dest and dest != name:
        for action in table.by_dest.get(dest, ()):
            if not action.get("deprecated") and action.get("action") in STORE_CLASSES:
                return "Use %s instead (same setting, new name)." % option_name(table.canonical(action))
    return None


def _replacement_message(name: str, release: Tuple[int, int, int]) -> str:
    for item in REPLACEMENTS.get(name, ()):
        if in_release_range(release, item.since, item.until) and item.message:
            return item.message
    return ""


# ---------------------------------------------------------------------------------------------------------------------
# The lint

class LintResult:
    """Outcome of linting one ``sglang_server_args`` dict against one release."""

    def __init__(self, release: str, table_release: str, findings: list, config: dict, args: dict,
                 secret_names: Iterable[str] = ()) -> None:
        self.release = release
        self.table_release = table_release
        self.findings = findings
        self.config = config  # option without '--' -> value: the content of SGLang's --config file
        self.args = args  # the operator's keys (underscore spelling) -> normalised value; holds secrets
        self.secret_names = sorted(set(secret_names))  # option names secret whatever they are called

    @property
    def errors(self) -> list:
        return [f for f in self.findings if f["severity"] == "error"]

    def redacted_args(self) -> dict:
        return redact_args(self.args, secret_values(self.args, self.secret_names), self.secret_names)

    def redacted_config(self) -> dict:
        return redact_args(self.config, secret_values(self.args, self.secret_names), self.secret_names)


def lint_server_args(server_args: Any, table: Mapping[str, Any], release: Optional[str] = None,
                     history: Optional[Mapping[str, Any]] = None, facts: Optional[Mapping[str, Any]] = None,
                     secret_names: Iterable[str] = (), model: Optional[Mapping[str, Any]] = None,
                     draft_model: Optional[Mapping[str, Any]] = None, options: Optional[Mapping[str, Any]] = None,
                     variable: str = "sglang_server_args", rules_release: Optional[str] = None) -> LintResult:
    """Lint a flag dict against a release's table; every problem is a finding, nothing raises on bad input.

    ``release`` is the release the operator runs (for the rules' ranges); it defaults to the table's. ``history``
    comes from build_history() and turns "unknown flag" into "removed in this release, use ...".
    ``facts`` (optional) are host facts for hardware rules: ``gpu_p2p`` (bool), ``nvlink`` (bool),
    ``service_user`` (str), ``environment`` (the service's environment variables). ``secret_names`` are keys to
    treat as secret whatever their name (the keys of the module's no_log ``secret_args``). ``model`` and
    ``draft_model`` are flags/model.py model_facts() of the models' config.json, when known. ``options`` holds the
    operator's opt-ins (``allow_open_without_api_key``). ``variable`` is the name messages give the flags
    (``sglang_server_args``). ``rules_release`` is the release whose cross-flag rules apply, when the release
    itself has none written for it (a table dumped from a host on day one); it defaults to the release.
    """
    tbl = FlagTable(table)
    secret_names = [option_name(n) for n in secret_names if isinstance(n, str)]
    release_text = release or tbl.release
    try:
        rel = parse_release(release_text)
    except ReleaseError as exc:
        return LintResult(str(release_text), tbl.release, [finding("error", "release_invalid", None, exc.message,
                                                                   exc.hint)], {}, {})
    findings = _release_findings(tbl, release_text, rel)
    rules_rel = rel
    if rules_release:
        try:
            rules_rel = parse_release(rules_release)
        except ReleaseError as exc:
            findings.append(finding("error", "release_invalid", None, exc.message, exc.hint))
        findings.extend(_rules_release_finding(rel, rules_rel))
    if server_args is None:
        server_args = {}
    if not isinstance(server_args, Mapping):
        findings.append(finding("error", "args_not_a_dict", None,
                                "sglang_server_args must be a dict of SGLang option names to values, not %s"
                                % type(server_args).__name__,
                                "Write it as a YAML mapping, e.g. {model_path: /models/x, tp_size: 2}."))
        return LintResult(format_release(rel), tbl.release, sort_findings(findings), {}, {})

    accepted = _AcceptedArgs()
    for key in sorted(server_args, key=lambda k: (str(k), type(k).__name__)):
        _lint_one(tbl, rel, history, key, server_args[key], secret_names, accepted, findings, variable)
    findings.extend(_missing_required(tbl, accepted.attempted, variable))
    findings.extend(_rule_findings(RuleContext(rules_rel, tbl, accepted.values, facts, model, draft_model, options,
                                               variable)))

    secrets = secret_values(accepted.args, secret_names)
    for item in findings:
        item["message"] = redact(item["message"], secrets)
        item["hint"] = redact(item["hint"], secrets)
    return LintResult(format_release(rel), tbl.release, sort_findings(findings),
                      {key: accepted.config[key] for key in sorted(accepted.config)},
                      {key: accepted.args[key] for key in sorted(accepted.args)}, secret_names)


def _release_findings(tbl: FlagTable, release_text: Any, rel: Tuple[int, int, int]) -> list:
    """How the table's release relates to the one linted: newer is an error, older or respelled is said."""
    findings = []
    try:
        wanted = release_key(release_text)
    except ReleaseError:
        wanted = tuple(rel) + (0,)
    if tbl.release:
        try:
            table_rel = release_key(tbl.release)
        except ReleaseError:
            table_rel = wanted
        if table_rel > wanted:
            findings.append(finding("error", "table_newer_than_release", None,
                                    "the flag table is for SGLang %s, newer than the release linted (%s)"
                                    % (tbl.release, format_release(wanted)),
                                    "Pass the table of the installed release."))
        elif table_rel < wanted:
            findings.append(finding("info", "table_nearest_older", None,
                                    "no flag table was dumped for SGLang %s; linted against the nearest older one (%s)"
                                    % (format_release(wanted), tbl.release),
                                    "Flags that %s added are reported as unknown; a deploy to a host with %s installed "
                                    "dumps its table (sglang_server_flag_tables_dir)." % (format_release(wanted),
                                                                                          format_release(wanted))))
    if isinstance(release_text, str) and release_text.strip().lstrip("v") != format_release(wanted):
        findings.append(finding("info", "release_normalised", None,
                                "SGLang %s is linted as release %s" % (release_text.strip(), format_release(wanted))))
    return findings


def _rules_release_finding(rel: Tuple[int, int, int], rules_rel: Tuple[int, int, int]) -> list:
    """Say so when the cross-flag rules are those of another (the nearest known) release."""
    if tuple(rules_rel) == tuple(rel[:3]):
        return []
    return [finding("info", "rules_from_nearest_release", None,
                    "the cross-flag rules applied are those of SGLang %s, the nearest release this collection knows: "
                    "rules that %s added or changed are not checked here, only by the host check"
                    % (format_release(rules_rel), format_release(rel)),
                    "Update the collection for rules written for SGLang %s (plugins/module_utils/flags/rules.py)."
                    % format_release(rel))]


class _AcceptedArgs:
    """What the per-key checks let through, and what they saw (for duplicates and required flags)."""

    def __init__(self) -> None:
        self.config: dict = {}  # option without '--' -> value: the content of SGLang's --config file
        self.args: dict = {}  # the operator's key (underscore spelling) -> normalised value
        self.values: dict = {}  # id(action) -> value, for the rules' context
        self.attempted: set = set()  # option names given, valid or not (a bad required flag is not "missing")
        self.seen_actions: dict = {}  # id(action) -> the key that set it
        self.seen_dests: dict = {}  # dest -> the option that set it


def _lint_one(tbl: FlagTable, rel: Tuple[int, int, int], history: Optional[Mapping[str, Any]], key: Any,
              value: Any, secret_names: list, accepted: _AcceptedArgs, findings: list,
              variable: str = "sglang_server_args") -> None:
    """Check one key and its value; record it in ``accepted`` when it may be rendered."""
    option, problem = normalise_key(key)
    if option is None:
        findings.append(finding("error", "bad_key", None, "%s: %s" % (variable, problem),
                                "Key %s by SGLang's option names, e.g. tp_size, tp-size or --tp-size." % variable))
        return
    name = option_name(option)
    accepted.attempted.add(name)
    action = _settable_action(tbl, option, name, rel, history, findings)
    if action is None:
        return
    canonical = tbl.canonical(action)
    accepted.attempted.add(option_name(canonical))
    if id(action) in accepted.seen_actions:
        findings.append(finding("error", "duplicate_flag", name,
                                "%s is given twice (as %s and %s)" % (name, display(accepted.seen_actions[id(action)]),
                                                                      display(key)),
                                "Keep one of them."))
        return
    accepted.seen_actions[id(action)] = key
    if action["dest"] in accepted.seen_dests:
        findings.append(finding("error", "conflicting_flags", name,
                                "%s and %s set the same SGLang setting (%s)"
                                % (option_name(accepted.seen_dests[action["dest"]]), name, action["dest"]),
                                "Keep one of them."))
        return
    accepted.seen_dests[action["dest"]] = option
    if not _config_loadable(tbl, action, option, name, rel, findings):
        return
    if value is None:
        findings.append(finding("info", "unset", name, "%s is null (~): left out of the config file, so SGLang "
                                "uses its default %s" % (name, display(tbl.default(name)))))
        return
    checked = ValueChecker(tbl, action, name, findings, name in secret_names, variable).check(value)
    if checked is DROP:
        return
    accepted.config[canonical[2:]] = checked
    accepted.args[name] = checked
    accepted.values[id(action)] = checked


def _settable_action(tbl: FlagTable, option: str, name: str, rel: Tuple[int, int, int],
                     history: Optional[Mapping[str, Any]], findings: list) -> Optional[Mapping[str, Any]]:
    """The release's action for an option that --config may set; None (with a finding) otherwise."""
    if option in ("--config", "--help"):  # normalise_key gives "--" + the key: "-h" never comes here
        findings.append(finding("error", "not_settable", name,
                                "%s cannot be set in SGLang's --config file" % option,
                                "The collection passes the config file itself; remove %s." % name))
        return None
    if option in tbl.serve_only:
        findings.append(finding("error", "serve_only_flag", name,
                                "%s is taken by the `sglang serve` wrapper before argparse runs, so SGLang's "
                                "--config file cannot set it" % option,
                                "Remove %s: the unit's ExecStart already passes --model-type llm." % name))
        return None
    action = tbl.by_option.get(option)
    if action is None:
        findings.append(_absent_flag(tbl, option, name, rel, history))
    return action


def _config_loadable(tbl: FlagTable, action: Mapping[str, Any], option: str, name: str, rel: Tuple[int, int, int],
                     findings: list) -> bool:
    """SGLang's --config loader takes store/store_true actions only; deprecated ones load with a warning."""
    kind = action.get("action")
    if kind not in STORE_CLASSES:
        hint = replacement_for(name, rel, tbl, action.get("dest")) if action.get("deprecated") else None
        findings.append(finding(
            "error", "config_unsupported", name,
            "%s%s (argparse action %s) cannot be set from SGLang's --config file: its loader takes only store "
            "and store_true options and refuses the rest (\"Unsupported config option '%s' with action '%s'\")"
            % ("deprecated " if action.get("deprecated") else "", option, kind, action["dest"], kind),
            hint or "%s cannot be set through sglang_server_args; leave it at SGLang's default." % name))
        return False
    if action.get("deprecated"):
        message = _replacement_message(name, rel) or "%s is deprecated in SGLang %s" % (option, format_release(rel))
        findings.append(finding("warning", "deprecated_flag", name, message,
                                replacement_for(name, rel, tbl, action.get("dest"))
                                or "SGLang will remove it; check its release notes for the replacement."))
    return True


def _missing_required(tbl: FlagTable, attempted: set, variable: str = "sglang_server_args") -> list:
    """argparse's "the following arguments are required" for each required option never given."""
    return [finding("error", "missing_required", option_name(tbl.canonical(action)),
                    "the following arguments are required: %s" % "/".join(action["opts"]),
                    "Set %s.%s." % (variable, option_name(tbl.canonical(action))))
            for action in tbl.actions
            if action.get("required") and option_name(tbl.canonical(action)) not in attempted]


def _rule_findings(ctx: RuleContext) -> list:
    """The cross-flag rules that apply to this release and whose options it has."""
    findings = []
    for item in RULES:
        if not in_release_range(ctx.release, item.since, item.until) or not all(ctx.has(n) for n in item.requires):
            continue
        try:
            findings.extend(item.check(ctx))
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A rule bug must not hide the other findings; report it instead.
            findings.append(finding("warning", "rule_failed", None, "lint rule %s failed: %s: %s"
                                    % (item.name, type(exc).__name__, exc),
                                    "Report this to the collection's maintainers."))
    return findings


def _absent_flag(tbl: FlagTable, option: str, name: str, rel: Tuple[int, int, int],
                 history: Optional[Mapping[str, Any]]) -> dict:
    """A key the release does not have: removed, not yet added, an abbreviation, or a typo."""
    matches = tbl.prefix_matches(option)
    if len(matches) > 1:
        argparse_says = "ambiguous option: %s could match %s" % (option, ", ".join(matches))
    elif len(matches) == 1:
        argparse_says = "argparse would silently read %s as %s" % (option, matches[0])
    else:
        argparse_says = "unrecognized arguments: %s" % option
    release = format_release(rel)
    seen = (history or {}).get(option) or []
    older = [entry for entry in seen if release_sort_key(entry[0])[:3] < tuple(rel[:3])]
    newer = [entry for entry in seen if release_sort_key(entry[0])[:3] > tuple(rel[:3])]
    curated = REPLACEMENTS.get(name)
    if older or (curated and not newer):
        hint = replacement_for(name, rel, tbl, older[-1][1] if older else None)
        last = " (last in %s)" % older[-1][0] if older else ""
        return finding("error", "removed_flag", name,
                       "SGLang %s no longer has %s%s; it would fail with: %s" % (release, option, last, argparse_says),
                       hint or "Drop it; SGLang %s has no replacement for it." % release)
    if newer:
        return finding("error", "flag_not_in_release", name,
                       "%s is not an option of SGLang %s (first in %s); it would fail with: %s"
                       % (option, release, newer[0][0], argparse_says),
                       "Install SGLang %s or newer (sglang_install_version), or drop %s." % (newer[0][0], name))
    if len(matches) == 1:
        return finding("error", "abbreviation", name,
                       "%s is an abbreviation of %s; SGLang accepts unique prefixes, but a later release can make it "
                       "ambiguous or point it elsewhere" % (option, matches[0]),
                       "Write the full name: %s." % option_name(matches[0]))
    names = sorted({option_name(o) for o in tbl.long_options})
    close = close_matches(name, names)
    hint = ("Did you mean %s?" % " or ".join(close)) if close else \
        "Drop it, or see `sglang serve --help` of SGLang %s for the option names." % release
    return finding("error", "ambiguous_flag" if len(matches) > 1 else "unknown_flag", name, argparse_says, hint)
