# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an installed SGLang (the real one, or the stand-in) says about many launch configs, in one process.

Run with the Python of a venv that has SGLang (no GPU needed); importing SGLang costs 6-20 s, each config then
about 25 ms, so the agreement benchmark and the contract test pay the import once:

    <venv>/bin/python tools/dev/flags/sglang_outcomes.py JOB.json RESULT.json

JOB.json: ``{"host_check_script": <text>, "cases": [{"name", "kind", "config" | "text"}]}``.

* ``kind: truth`` - SGLang itself on the operator's flags: ``config`` (a mapping with SGLang's dash keys) is
  written with PyYAML as a ``--config`` file, exactly what SGLang's loader reads, and SGLang's own path runs:
  ``prepare_server_args``, ``resolve_once``, ``check_server_args``, with ``--device cuda`` where torch sees no
  accelerator (as docs/reference/sglang.md#resolution-without-a-gpu says to pass).
* ``kind: host`` - the collection's host check (plugins/module_utils/flags/preflight.py HOST_CHECK_SCRIPT,
  passed in the job so this file needs nothing of the collection) on the file the collection rendered (``text``).

RESULT.json: ``{"sglang_version", "results": {name: {"ok", "stage", "type", "message"}}}``. The environment is
restored after each case, since resolution may set variables.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile


def _argparse_error(text: str) -> str:
    lines = [line for line in text.splitlines() if ": error: " in line]
    return lines[-1].split(": error: ", 1)[1] if lines else text.strip().splitlines()[-1] if text.strip() else ""


def truth(prepare_server_args, no_accelerator, config: dict, directory: str) -> dict:
    """SGLang's verdict on a config, through its own loader, parser, resolution and checks."""
    import yaml  # pylint: disable=import-outside-toplevel

    path = os.path.join(directory, "truth.yaml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    argv = ["--config", path]
    if "device" not in config and no_accelerator():
        argv += ["--device", "cuda"]
    errors = io.StringIO()
    stage = "parse"
    try:
        with contextlib.redirect_stderr(errors):
            server_args = prepare_server_args(argv)
            stage = "resolve"
            if hasattr(server_args, "resolve_once"):
                server_args.resolve_once()
            if hasattr(server_args, "check_server_args"):
                server_args.check_server_args()
    except SystemExit as exc:
        return {"ok": False, "stage": stage, "type": "SystemExit", "message": _argparse_error(errors.getvalue())
                or str(exc.code)}
    except Exception as exc:  # pylint: disable=broad-exception-caught
        return {"ok": False, "stage": stage, "type": type(exc).__name__, "message": str(exc)}
    return {"ok": True, "stage": None, "type": None, "message": ""}


def host(namespace: dict, text: str, directory: str) -> dict:
    """The collection's host check on a rendered file (its run_check, as the module's command runs it)."""
    path = os.path.join(directory, "host.yaml")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        result = namespace["run_check"](["--config", path], "resolve")
    error = result.get("error")
    if error is None:
        return {"ok": True, "stage": None, "type": None, "message": ""}
    message = error.get("message") or ""
    if error.get("type") == "SystemExit" and error.get("stage") == "parse":
        message = _argparse_error(errors.getvalue()) or message
    return {"ok": False, "stage": error.get("stage"), "type": error.get("type"), "message": message}


def main(argv: list) -> int:
    """Run every case of the job; write the results."""
    with open(argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    namespace = {"__name__": "gpufleet_host_check"}
    exec(compile(job["host_check_script"], "HOST_CHECK_SCRIPT", "exec"), namespace)  # pylint: disable=exec-used
    sys.argv[0] = "sglang serve"
    namespace["prepare_plugins"]()
    from sglang.srt.server_args import prepare_server_args  # pylint: disable=import-outside-toplevel

    logging.disable(logging.CRITICAL)
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        for case in job["cases"]:
            saved = dict(os.environ)
            try:
                if case["kind"] == "truth":
                    results[case["name"]] = truth(prepare_server_args, namespace["no_accelerator"], case["config"],
                                                  directory)
                else:
                    results[case["name"]] = host(namespace, case["text"], directory)
            finally:
                os.environ.clear()
                os.environ.update(saved)
                logging.disable(logging.CRITICAL)
    with open(argv[2], "w", encoding="utf-8") as handle:
        json.dump({"sglang_version": namespace["installed_version"](), "results": results}, handle, indent=1,
                  sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
