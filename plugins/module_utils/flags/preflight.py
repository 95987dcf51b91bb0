# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight around the lint: argument spec, secrets, the real-parser run and the merged report.

Shared by the ``sglang_preflight`` action plugin (lint on the controller, no connection to the host) and the
module (lint, real parser and config file on the target), so both give the same report. Pure: the module runs
the parser command and hands its exit status and output to ``interpret_parser_run``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import count_findings, finding, sort_findings
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.lint import LintResult
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import ReleaseError, parse_release
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import MASK, redact
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config

ARGUMENT_SPEC = dict(
    server_args=dict(type="dict", required=True),
    secret_args=dict(type="dict", default={}, no_log=True),
    sglang_version=dict(type="str", required=True),
    venv=dict(type="path"),
    dest=dict(type="path"),
    owner=dict(type="str"),
    group=dict(type="str"),
    mode=dict(type="raw", default="0640"),
    parser_timeout=dict(type="int", default=60),
    facts=dict(type="dict", default={}),
    fail_on=dict(type="str", default="error", choices=["error", "warning", "never"]),
    flag_table=dict(type="dict"),
    tables_dir=dict(type="path"),
)

FAIL_RANK = {"error": ("error",), "warning": ("error", "warning"), "never": ()}

# Run by <venv>/bin/python: stop SGLang's own prepare_server_args() right after argparse (and the --config
# expansion before it) succeeded. Stopping there keeps the check parse-only on every release: up to 0.5.18
# ServerArgs.__post_init__ would otherwise resolve against the model config and the GPUs. signal.alarm bounds the
# time even where coreutils' timeout is missing. The first stdout line names the installed release.
PARSE_ONLY_SCRIPT = r"""
import argparse, signal, sys
signal.alarm(int(sys.argv.pop(1)))
try:
    from importlib.metadata import version
    installed = version("sglang")
except Exception:
    installed = None
sys.argv[0] = "sglang serve"
from sglang.srt.server_args import prepare_server_args
if installed is None:
    import sglang
    installed = getattr(sglang, "__version__", None)
if installed:
    print("GPUFLEET_SGLANG_VERSION=%s" % installed, flush=True)
try:
    from sglang.srt.plugins import load_plugins
except ImportError:
    load_plugins = None
if load_plugins is not None:
    load_plugins()


class _ParsedOK(BaseException):
    pass


_parse_args = argparse.ArgumentParser.parse_args


def _parse_then_stop(self, args=None, namespace=None):
    _parse_args(self, args, namespace)
    raise _ParsedOK()


argparse.ArgumentParser.parse_args = _parse_then_stop
try:
    prepare_server_args(sys.argv[1:])
except _ParsedOK:
    pass
print("GPUFLEET_PARSE_OK", flush=True)
"""

PARSE_OK_MARKER = "GPUFLEET_PARSE_OK"
_VERSION_RE = re.compile(r"^GPUFLEET_SGLANG_VERSION=(\S+)\s*$", re.M)
_ARGPARSE_ERROR_RE = re.compile(r"^(?P<prog>[^\n]*?): error: (?P<msg>.+)$")
_EXCEPTION_RE = re.compile(r"^(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception)): ?(?P<msg>.*)$")
_OPTION_RE = re.compile(r"(?<![\w-])--([A-Za-z0-9][A-Za-z0-9-]*)")
_QUOTED_KEY_RE = re.compile(r"(?:option|value for|value\(s\) for) '([A-Za-z0-9_-]+)'")


def merge_secret_args(server_args: Any, secret_args: Optional[Mapping[str, Any]]) -> Any:
    """Put secret flags back for the lint; secret_args wins when both name the same key."""
    if not isinstance(server_args, Mapping) or not secret_args:
        return server_args
    merged = dict(server_args)
    merged.update(secret_args)
    return merged


def parser_command(python: str, config_path: str, timeout: int, timeout_bin: Optional[str] = None) -> list:
    """The argv of the real-parser check: parse-only, bounded by ``timeout`` seconds."""
    command = [python, "-c", PARSE_ONLY_SCRIPT, str(max(1, int(timeout))), "--config", config_path]
    if timeout_bin:
        # coreutils' timeout as the outer guard (kills the process group), a few seconds after the alarm.
        command = [timeout_bin, "--kill-after=5", str(max(1, int(timeout)) + 5)] + command
    return command


def interpret_parser_run(rc: int, stdout: str, stderr: str, seconds: float, timeout: int,
                         release: Optional[str] = None) -> Tuple[list, dict]:
    """Findings (source ``parser``) and a summary from the exit status and output of the parse-only run."""
    stdout = stdout or ""
    stderr = stderr or ""
    info = {"ran": True, "rc": rc, "seconds": round(float(seconds), 2), "error": "", "sglang_version": ""}
    findings = []
    match = _VERSION_RE.search(stdout)
    if match:
        info["sglang_version"] = match.group(1)
        mismatch = _version_mismatch(match.group(1), release)
        if mismatch:
            findings.append(mismatch)
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    killed = rc in (-9, 137)  # SIGKILL: timeout's --kill-after, or the OOM killer
    if rc in (124, -14, 142) or (rc != 0 and seconds >= timeout and (killed or not _error_line(lines))):
        info["error"] = "timed out after %d s" % timeout
        findings.append(finding("error", "parser_timeout", None,
                                "the parse-only check did not finish within %d s (rc %s)" % (timeout, rc),
                                "Importing SGLang takes 6-9 s on a real install; raise parser_timeout if the host is "
                                "slow or busy, or look for a hung import.", "parser"))
        return findings, info
    if rc == 0:
        return findings, info
    if killed:
        info["error"] = "killed by SIGKILL after %.1f s" % seconds
        findings.append(finding("error", "parser_crashed", None,
                                "the parse-only check was killed (SIGKILL) after %.1f s" % seconds,
                                "Parsing needs about 1 GB of memory on a real install; check dmesg for the OOM "
                                "killer.", "parser"))
        return findings, info
    line = _error_line(lines)
    info["error"] = redact(line or "exit status %s" % rc)
    if "No module named 'sglang" in stderr or "No module named sglang" in stderr:
        findings.append(finding("error", "parser_unavailable", None, info["error"],
                                "SGLang is not importable from the venv; install it (sglang_install) or fix venv.",
                                "parser"))
        return findings, info
    parsed = _ARGPARSE_ERROR_RE.match(line or "")
    if parsed:
        findings.extend(_argparse_findings(parsed.group("msg")))
        return findings, info
    exc = _EXCEPTION_RE.match(line or "")
    if exc:
        flags = _QUOTED_KEY_RE.findall(exc.group("msg"))
        findings.append(finding("error", "parser_refused", flags[0].replace("-", "_") if flags else None,
                                redact(line),
                                "SGLang's --config loader or parser raised this while reading the flags.", "parser"))
        return findings, info
    findings.append(finding("error", "parser_crashed", None,
                            "the parse-only check failed (rc %s): %s" % (rc, info["error"]),
                            "Run it by hand to see the whole output: <venv>/bin/python -c 'import sys; from "
                            "sglang.srt.server_args import prepare_server_args; prepare_server_args(sys.argv[1:])' "
                            "--config <file>.yaml", "parser"))
    return findings, info


def _error_line(lines: list) -> str:
    """The line that says what failed: argparse's 'prog: error: ...', else the last exception line."""
    for line in reversed(lines):
        if _ARGPARSE_ERROR_RE.match(line):
            return line
    for line in reversed(lines):
        if _EXCEPTION_RE.match(line):
            return line
    return lines[-1] if lines else ""


def _argparse_findings(message: str) -> list:
    """One finding per flag argparse names (it names every unrecognized one at once)."""
    message = redact(message)
    if message.startswith("unrecognized arguments:"):
        options = _OPTION_RE.findall(message)
        if options:
            return [finding("error", "parser_unrecognized", option.replace("-", "_"),
                            "unrecognized arguments: --%s" % option,
                            "The installed SGLang has no such option; check that sglang_install_version matches "
                            "the venv.", "parser") for option in options]
        return [finding("error", "parser_refused", None, message,
                        "A stray value reached the command line: an on/off option that SGLang's config loader does "
                        "not treat as store_true.", "parser")]
    if message.startswith("the following arguments are required:"):
        options = _OPTION_RE.findall(message)
        return [finding("error", "parser_missing_required", options[0].replace("-", "_") if options else None,
                        message, "Set it in sglang_server_args.", "parser")]
    options = _OPTION_RE.findall(message)
    return [finding("error", "parser_refused", options[0].replace("-", "_") if options else None, message,
                    "SGLang's own argument parser refused this value.", "parser")]


def _version_mismatch(installed: str, release: Optional[str]) -> Optional[dict]:
    if not release:
        return None
    try:
        if parse_release(installed) == parse_release(release):
            return None
    except ReleaseError:
        return finding("info", "parser_version_unknown", None,
                       "the venv reports SGLang version %r, which is not a release number" % installed, "", "parser")
    return finding("error", "version_mismatch", None,
                   "the venv has SGLang %s, but the flags were linted for %s" % (installed, release),
                   "Set sglang_install_version to the installed release, or install %s." % release, "parser")


def render_for_report(lint: LintResult) -> Tuple[str, str]:
    """(the config file with its secrets, the same file with secrets masked for the result)."""
    return render_server_config(lint.config), render_server_config(lint.redacted_config())


def report_lines(findings: Iterable[Mapping[str, Any]]) -> list:
    """One readable line per finding, for the playbook's summary."""
    lines = []
    for item in findings:
        text = "%s %s: %s" % (item["severity"].upper(), item["flag"] or "-", item["message"])
        if item.get("hint"):
            text += " -- fix: " + item["hint"]
        if item.get("source") and item["source"] != "lint":
            text += " [%s]" % item["source"]
        lines.append(text)
    return lines


def verdict(findings: list, fail_on: str, release: str) -> Tuple[bool, str]:
    """(failed, msg): every error (and warning, with fail_on=warning) listed in one message."""
    counts = count_findings(findings)
    blocking = [f for f in findings if f["severity"] in FAIL_RANK.get(fail_on, ("error",))]
    listed = blocking or [f for f in findings if f["severity"] == "error"]  # fail_on=never still names errors
    summary = "%d error%s, %d warning%s, %d info" % (
        counts["error"], "" if counts["error"] == 1 else "s", counts["warning"],
        "" if counts["warning"] == 1 else "s", counts["info"])
    if not listed:
        return False, "SGLang %s launch flags: %s" % (release, summary)
    parts = []
    for item in listed:
        part = "%s: %s" % (item["flag"] or item["code"], item["message"])
        if item.get("hint"):
            part += " (fix: %s)" % item["hint"]
        parts.append(part)
    return bool(blocking), "SGLang %s would not run these launch flags as intended (%s). %s" % (
        release, summary, " | ".join(parts))


def build_result(lint: LintResult, parser_findings: Iterable[Mapping[str, Any]] = (),
                 parser_info: Optional[Mapping[str, Any]] = None, fail_on: str = "error",
                 extra_findings: Iterable[Mapping[str, Any]] = ()) -> dict:
    """The module/action result: merged findings, summary, redacted args and config; never a secret."""
    findings = sort_findings(list(extra_findings) + list(lint.findings) + list(parser_findings))
    failed, msg = verdict(findings, fail_on, lint.release)
    try:
        dummy, shown = render_for_report(lint)
    except ValueError as exc:  # the lint drops what cannot be rendered; this is a guard, not a path
        shown = "# not rendered: %s\n" % exc
    result = {
        "changed": False,
        "failed": failed,
        "msg": msg,
        "findings": findings,
        "summary": count_findings(findings),
        "report": report_lines(findings),
        "sglang_version": lint.release,
        "table_version": lint.table_release,
        "args": lint.redacted_args(),
        "config": shown,
        "parser": dict(parser_info or {"ran": False}),
    }
    return result


def release_error_result(exc: ReleaseError, requested: Any) -> dict:
    """The result when no table fits the release: one error finding, nothing else to lint against."""
    item = finding("error", "release_unsupported", None, exc.message, exc.hint)
    return {
        "changed": False,
        "failed": True,
        "msg": "%s. %s" % (exc.message, exc.hint),
        "findings": [item],
        "summary": count_findings([item]),
        "report": report_lines([item]),
        "sglang_version": str(requested) if not isinstance(requested, Mapping) else MASK,
        "table_version": "",
        "args": {},
        "config": "",
        "parser": {"ran": False},
    }
