# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight around the lint: argument spec, secrets, the host check and the merged report.

Shared by the ``sglang_preflight`` action plugin (lint on the controller, no connection to the host) and the
module (lint, host check and config file on the target), so both give the same report. The host check runs
the installed SGLang's own path on the rendered file: ``prepare_server_args`` (argparse and the --config
loader), then, when the model's config.json is on the host, ``resolve_once`` and ``check_server_args``
(``HOST_CHECK_SCRIPT``, docs/preflight.md#host-check). The module runs the command; this file builds it and
reads its output (``interpret_parser_run``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping, Optional, Tuple

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import count_findings, finding, sort_findings
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.lint import LintResult, lint_server_args
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.model import (
    find_model_config,
    model_facts,
    read_model_config,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import ReleaseError, map_release, release_key
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import MASK, redact
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import render_server_config

ARGUMENT_SPEC = dict(
    server_args=dict(type="dict", required=True),
    secret_args=dict(type="dict", default={}, no_log=True),
    sglang_version=dict(type="str", required=True),
    release_map=dict(type="dict", default={}),
    venv=dict(type="path"),
    dest=dict(type="path"),
    owner=dict(type="str"),
    group=dict(type="str"),
    mode=dict(type="raw", default="0640"),
    parser_timeout=dict(type="int", default=60),
    resolve=dict(type="bool", default=True),
    service_env=dict(type="dict", default={}),
    facts=dict(type="dict", default={}),
    fail_on=dict(type="str", default="error", choices=["error", "warning", "never"]),
    flag_table=dict(type="dict"),
    tables_dir=dict(type="path"),
    dump_table=dict(type="bool", default=False),
    rules_release=dict(type="str"),
    model_config=dict(type="dict"),
    draft_model_config=dict(type="dict"),
    allow_open_without_api_key=dict(type="bool", default=False),
    variable=dict(type="str", default="sglang_server_args"),
)

FAIL_RANK = {"error": ("error",), "warning": ("error", "warning"), "never": ()}

# Run by <venv>/bin/python as ``python -c HOST_CHECK_SCRIPT <timeout> <parse|resolve> --config <file>``, or
# exec()'d with another __name__ by the agreement benchmark to call run_check() for many configs in one process.
# Parsing stops right after argparse (prepare_server_args up to 0.5.18 would otherwise resolve inside it); in
# resolve mode SGLang's own path runs in full: prepare_server_args, resolve_once, check_server_args (the last two
# only where they exist, 0.5.19+; earlier releases resolve inside prepare_server_args). On a host where torch sees
# no accelerator, resolution gets --device cuda (unless the flags set a device), so it takes the no-GPU branches
# instead of failing with "No accelerator ... is available" (docs/reference/sglang.md#resolution-without-a-gpu).
# signal.alarm bounds the time even where coreutils' timeout is missing. Its stdout says the installed release,
# GPUFLEET_PARSE_OK once argparse accepted the flags, and GPUFLEET_HOST_CHECK=<json> with the outcome.
HOST_CHECK_SCRIPT = r"""
import argparse
import json
import signal
import sys
import traceback


class _ParsedOK(BaseException):
    pass


def installed_version():
    try:
        from importlib.metadata import version
        return version("sglang")
    except Exception:
        import sglang
        return getattr(sglang, "__version__", None)


def prepare_plugins():
    try:
        from sglang.srt.plugins import load_plugins
    except ImportError:
        return
    load_plugins()


def no_accelerator():
    try:
        import torch
    except Exception:
        return True
    checks = [getattr(torch, "cuda", None)] + [getattr(torch, n, None) for n in ("xpu", "mps", "npu", "musa")]
    for backend in checks:
        try:
            if backend is not None and backend.is_available():
                return False
        except Exception:
            continue
    return True


def parse_only(prepare, argv):
    captured = {}
    original = argparse.ArgumentParser.parse_args

    def stop(self, args=None, namespace=None):
        captured["namespace"] = original(self, args, namespace)
        raise _ParsedOK()

    argparse.ArgumentParser.parse_args = stop
    try:
        prepare(list(argv))
    except _ParsedOK:
        pass
    finally:
        argparse.ArgumentParser.parse_args = original
    return captured.get("namespace")


def _failure(stage, exc):
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    for frame in reversed(frames):
        if "sglang" in frame.filename:
            where = "%s:%s" % (frame.filename.split("sglang", 1)[-1].lstrip("/"), frame.name)
            break
    return {"stage": stage, "type": type(exc).__name__, "message": str(exc), "where": where}


def run_check(argv, mode):
    from sglang.srt.server_args import prepare_server_args
    out = {"parsed": False, "resolved": None, "device_added": False, "error": None}
    try:
        namespace = parse_only(prepare_server_args, argv)
    except SystemExit as exc:
        out["error"] = {"stage": "parse", "type": "SystemExit", "message": str(exc.code), "where": "argparse"}
        return out
    except Exception as exc:
        out["error"] = _failure("parse", exc)
        return out
    out["parsed"] = True
    if mode != "resolve":
        return out
    argv = list(argv)
    if getattr(namespace, "device", None) in (None, "") and no_accelerator():
        argv += ["--device", "cuda"]
        out["device_added"] = True
    try:
        server_args = prepare_server_args(argv)
        if hasattr(server_args, "resolve_once"):
            server_args.resolve_once()
        if hasattr(server_args, "check_server_args"):
            server_args.check_server_args()
    except SystemExit as exc:
        out["error"] = {"stage": "resolve", "type": "SystemExit", "message": str(exc.code), "where": ""}
        return out
    except Exception as exc:
        traceback.print_exc()
        out["error"] = _failure("resolve", exc)
        return out
    out["resolved"] = True
    return out


if __name__ == "__main__":
    signal.alarm(int(sys.argv.pop(1)))
    mode = sys.argv.pop(1)
    sys.argv[0] = "sglang serve"
    version = installed_version()
    if version:
        print("GPUFLEET_SGLANG_VERSION=%s" % version, flush=True)
    prepare_plugins()
    result = run_check(sys.argv[1:], mode)
    if result["parsed"]:
        print("GPUFLEET_PARSE_OK", flush=True)
    print("GPUFLEET_HOST_CHECK=" + json.dumps(result), flush=True)
    if result["error"] is None:
        sys.exit(0)
    sys.exit(2 if result["error"]["type"] == "SystemExit" and result["error"]["stage"] == "parse" else 3)
"""
PARSE_ONLY_SCRIPT = HOST_CHECK_SCRIPT  # the name earlier releases of the collection used

PARSE_OK_MARKER = "GPUFLEET_PARSE_OK"
_VERSION_RE = re.compile(r"^GPUFLEET_SGLANG_VERSION=(\S+)\s*$", re.M)
_RESULT_RE = re.compile(r"^GPUFLEET_HOST_CHECK=(\{.*\})\s*$", re.M)
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


def parser_command(python: str, config_path: str, timeout: int, timeout_bin: Optional[str] = None,
                   mode: str = "parse") -> list:
    """The argv of the host check (``mode`` parse or resolve), bounded by ``timeout`` seconds."""
    command = [python, "-c", HOST_CHECK_SCRIPT, str(max(1, int(timeout))), mode, "--config", config_path]
    if timeout_bin:
        # coreutils' timeout as the outer guard (kills the process group), a few seconds after the alarm.
        command = [timeout_bin, "--kill-after=5", str(max(1, int(timeout)) + 5)] + command
    return command


def _host_result(stdout: str) -> Optional[dict]:
    match = _RESULT_RE.search(stdout)
    if not match:
        return None
    try:
        result = json.loads(match.group(1))
    except ValueError:
        return None
    return result if isinstance(result, dict) else None


def resolution_finding(error: Mapping[str, Any]) -> dict:
    """The finding for an exception SGLang's resolution or check_server_args raised (source ``host``)."""
    kind = str(error.get("type") or "Exception")
    message = redact(str(error.get("message") or ""))
    where = str(error.get("where") or "")
    text = "%s: %s" % (kind, message) if message else \
        "%s (SGLang gives no message)%s" % (kind, " in %s" % where if where else "")
    options = _OPTION_RE.findall(message)
    return finding("error", "host_check_refused", options[0].replace("-", "_") if options else None, text,
                   "SGLang's own resolution (resolve_once, check_server_args) refused these flags for this model on "
                   "the host; change what it names. To see the whole traceback run the host check by hand "
                   "(docs/preflight.md#host-check).", "host")


def interpret_parser_run(rc: int, stdout: str, stderr: str, seconds: float, timeout: int,
                         release: Optional[str] = None,
                         release_map: Optional[Mapping[str, Any]] = None) -> Tuple[list, dict]:
    """Findings (source ``parser`` or ``host``) and a summary from the exit status and output of the host check."""
    stdout = stdout or ""
    stderr = stderr or ""
    info = {"ran": True, "rc": rc, "seconds": round(float(seconds), 2), "error": "", "sglang_version": "",
            "resolved": None, "device_added": False}
    findings = []
    match = _VERSION_RE.search(stdout)
    if match:
        info["sglang_version"] = match.group(1)
        mismatch = _version_mismatch(match.group(1), release, release_map)
        if mismatch:
            findings.append(mismatch)
    result = _host_result(stdout)
    if result is not None:
        info["resolved"] = result.get("resolved")
        info["device_added"] = bool(result.get("device_added"))
        error = result.get("error")
        if isinstance(error, dict) and error.get("stage") == "resolve":
            info["error"] = redact("%s: %s" % (error.get("type"), error.get("message")))
            findings.append(resolution_finding(error))
            return findings, info
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    killed = rc in (-9, 137)  # SIGKILL: timeout's --kill-after, or the OOM killer
    if rc in (124, -14, 142) or (rc != 0 and seconds >= timeout and (killed or not _error_line(lines))):
        info["error"] = "timed out after %d s" % timeout
        findings.append(finding("error", "parser_timeout", None,
                                "the host check did not finish within %d s (rc %s)" % (timeout, rc),
                                "Importing SGLang takes 6-9 s on a real install, resolution a few more; raise "
                                "sglang_server_preflight_timeout if the host is slow or busy, or look for a hung "
                                "import.", "parser"))
        return findings, info
    if rc == 0:
        return findings, info
    if killed:
        info["error"] = "killed by SIGKILL after %.1f s" % seconds
        findings.append(finding("error", "parser_crashed", None,
                                "the host check was killed (SIGKILL) after %.1f s" % seconds,
                                "It needs about 1 GB of memory on a real install; check dmesg for the OOM killer.",
                                "parser"))
        return findings, info
    line = _error_line(lines)
    if result is not None and isinstance(result.get("error"), dict) and result["error"].get("type") != "SystemExit":
        line = "%s: %s" % (result["error"].get("type"), result["error"].get("message"))
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
                            "the host check failed (rc %s): %s" % (rc, info["error"]),
                            "Run it by hand to see the whole output (docs/preflight.md#host-check).", "parser"))
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


def _version_mismatch(installed: str, release: Optional[str],
                      release_map: Optional[Mapping[str, Any]] = None) -> Optional[dict]:
    if not release:
        return None
    try:
        mapped, dummy = map_release(installed, release_map)
        if release_key(mapped)[:3] == release_key(release)[:3]:  # a post release keeps its release's flags
            return None
    except ReleaseError as exc:
        return finding("error", "version_mismatch", None,
                       "the venv has SGLang %s, which is not a release the lint knows: %s" % (installed, exc.message),
                       exc.hint, "parser")
    return finding("error", "version_mismatch", None,
                   "the venv has SGLang %s, but the flags were linted for %s" % (installed, release),
                   "Set sglang_install_version to the installed release, or install %s." % release, "parser")


def render_for_report(lint: LintResult) -> Tuple[str, str]:
    """(the config file with its secrets, the same file with secrets masked for the result)."""
    return render_server_config(lint.config), render_server_config(lint.redacted_config())


def _subject(item: Mapping[str, Any], variable: str) -> str:
    """What a finding is about, as the operator names it: sglang_server_args.tp_size, else its code."""
    if item.get("flag"):
        return "%s.%s" % (variable, item["flag"]) if variable else item["flag"]
    return item.get("code") or "-"


def report_lines(findings: Iterable[Mapping[str, Any]], variable: str = "sglang_server_args") -> list:
    """One readable line per finding, for the playbook's summary."""
    lines = []
    for item in findings:
        text = "%s %s: %s" % (item["severity"].upper(), _subject(item, variable), item["message"])
        if item.get("hint"):
            text += " -- fix: " + item["hint"]
        if item.get("source") and item["source"] != "lint":
            text += " [%s]" % item["source"]
        lines.append(text)
    return lines


def verdict(findings: list, fail_on: str, release: str, variable: str = "sglang_server_args") -> Tuple[bool, str]:
    """(failed, msg): every error and every warning, each with its fix, in one message; infos stay in report."""
    counts = count_findings(findings)
    blocking = [f for f in findings if f["severity"] in FAIL_RANK.get(fail_on, ("error",))]
    listed = [f for f in findings if f["severity"] in ("error", "warning")]
    summary = "%d error%s, %d warning%s, %d info" % (
        counts["error"], "" if counts["error"] == 1 else "s", counts["warning"],
        "" if counts["warning"] == 1 else "s", counts["info"])
    parts = []
    for item in listed:
        part = "%s%s: %s" % ("warning: " if item["severity"] == "warning" else "", _subject(item, variable),
                             item["message"])
        if item.get("hint"):
            part += " (fix: %s)" % item["hint"]
        parts.append(part)
    if not counts["error"]:
        head = "SGLang %s launch flags: %s" % (release, summary)
        return bool(blocking), head + (". " + " | ".join(parts) if parts else "")
    return bool(blocking), "SGLang %s would not run these launch flags as intended (%s). %s" % (
        release, summary, " | ".join(parts))


def build_result(lint: LintResult, parser_findings: Iterable[Mapping[str, Any]] = (),
                 parser_info: Optional[Mapping[str, Any]] = None, fail_on: str = "error",
                 extra_findings: Iterable[Mapping[str, Any]] = (), variable: str = "sglang_server_args") -> dict:
    """The module/action result: merged findings, summary, redacted args and config; never a secret."""
    findings = sort_findings(list(extra_findings) + list(lint.findings) + list(parser_findings))
    failed, msg = verdict(findings, fail_on, lint.release, variable)
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
        "report": report_lines(findings, variable),
        "sglang_version": lint.release,
        "table_version": lint.table_release,
        "args": lint.redacted_args(),
        "config": shown,
        "parser": dict(parser_info or {"ran": False}),
    }
    return result


# ---------------------------------------------------------------------------------------------------------------------
# The model's config.json, for the lint's model rules and the decision to resolve on the host

def model_inputs(config: Mapping[str, Any]) -> dict:
    """Where the rendered flags say the models are (keys of the --config file, as SGLang spells them)."""
    return {
        "model_path": config.get("model-path") or config.get("model"),
        "revision": config.get("revision"),
        "draft_path": config.get("speculative-draft-model-path") or config.get("speculative-draft"),
        "draft_revision": config.get("speculative-draft-model-revision"),
        "overrides": config.get("json-model-override-args"),
    }


def locate_models(config: Mapping[str, Any], environ: Optional[Mapping[str, str]] = None,
                  given: Optional[Mapping[str, Any]] = None, given_draft: Optional[Mapping[str, Any]] = None) -> dict:
    """The model's and the draft model's facts (model_facts), or why they are unknown.

    ``given`` / ``given_draft`` are config.json contents the caller already has (the module's model_config
    options); otherwise the files are looked up where SGLang would find them, with ``environ`` (the service's
    environment: HF_HOME decides the hub cache).
    """
    inputs = model_inputs(config)
    out = {"model": None, "model_reason": "", "draft": None, "draft_reason": "", "draft_wanted": bool(inputs["draft_path"])}
    for key, path, revision, content in (("model", inputs["model_path"], inputs["revision"], given),
                                         ("draft", inputs["draft_path"], inputs["draft_revision"], given_draft)):
        if key == "draft" and not path and not content:
            continue
        if not content:
            found, reason = find_model_config(path, revision, environ)
            if found is None:
                out[key + "_reason"] = reason
                continue
            content, reason = read_model_config(found)
            if content is None:
                out[key + "_reason"] = reason
                continue
        # json_model_override_args applies to the target model (the draft gets its own override in SGLang).
        out[key] = model_facts(content, inputs["overrides"] if key == "model" else None)
    return out


def model_findings(models: Mapping[str, Any]) -> list:
    """Info findings saying which model checks could not run, and why."""
    out = []
    if models.get("model") is None:
        out.append(finding("info", "model_config_unknown", None,
                           "the model's config.json is not available here (%s): the checks that need it (encoder "
                           "disaggregation, context_length, the head split by tp_size, quantization, the draft "
                           "model's shape) were skipped" % (models.get("model_reason") or "unknown"),
                           "They run on the host once the weights are there (model_cache), or give the config "
                           "with the module's model_config option."))
    if models.get("draft_wanted") and models.get("draft") is None:
        out.append(finding("info", "draft_config_unknown", "speculative_draft_model_path",
                           "the draft model's config.json is not available here (%s): its shape was not checked"
                           % (models.get("draft_reason") or "unknown")))
    return out


def resolution_plan(resolve: bool, lint: LintResult, models: Mapping[str, Any]) -> Tuple[str, Optional[dict]]:
    """('resolve' or 'parse', the info finding that says why resolution is skipped, or None)."""
    reason = ""
    if not resolve:
        reason = "sglang_server_preflight_resolve is false"
    elif lint.errors:
        reason = "the lint found errors; fix them first"
    elif models.get("model") is None:
        reason = "the model's config.json is not on the host (%s)" % (models.get("model_reason") or "unknown")
    elif models.get("draft_wanted") and models.get("draft") is None:
        reason = "the draft model's config.json is not on the host (%s)" % (models.get("draft_reason") or "unknown")
    if not reason:
        return "resolve", None
    return "parse", finding("info", "resolution_skipped", None,
                            "SGLang's resolve_once and check_server_args were not run on the host: %s; only its "
                            "argument parser checked the flags" % reason, "", "host")


def lint_for_host(server_args: Any, table: Mapping[str, Any], params: Mapping[str, Any],
                  environ: Optional[Mapping[str, str]] = None) -> Tuple[LintResult, dict, list]:
    """The lint as the module and the action plugin run it: (result, the models located, extra findings).

    The release is mapped (release_map) or parsed strictly first (ReleaseError otherwise); a first pass renders
    the flags, so the model paths are known as SGLang will read them; the models' config.json are then looked
    up (or taken from ``model_config`` / ``draft_model_config``) and the lint runs again with their facts.
    """
    release, mapped_from = map_release(params.get("sglang_version"), params.get("release_map"))
    secret_names = list(params.get("secret_args") or {})
    facts = dict(params.get("facts") or {})
    facts.setdefault("environment", dict(params.get("service_env") or {}))
    common = dict(history=table.get("history"), facts=facts, secret_names=secret_names,
                  variable=params.get("variable") or "sglang_server_args",
                  rules_release=params.get("rules_release"),
                  options={"allow_open_without_api_key": bool(params.get("allow_open_without_api_key"))})
    first = lint_server_args(server_args, table, release, **common)
    models = locate_models(first.config, environ, params.get("model_config"), params.get("draft_model_config"))
    lint = lint_server_args(server_args, table, release, model=models["model"], draft_model=models["draft"],
                            **common)
    extra = model_findings(models)
    if mapped_from:
        extra.append(finding("info", "release_mapped", None,
                             "SGLang %s is linted as release %s, as sglang_server_release_map says"
                             % (mapped_from, release)))
    return lint, models, extra


def release_error_result(exc: ReleaseError, requested: Any, fail_on: str = "error") -> dict:
    """The result when no table fits the release: one error finding, nothing else to lint against."""
    item = finding("error", "release_unsupported", None, exc.message, exc.hint)
    return {
        "changed": False,
        "failed": fail_on != "never",
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
