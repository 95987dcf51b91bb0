# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight against an installed SGLang on the configs of tests/data/preflight_configs/.

Used by benchmarks/preflight_agreement.py (the counts the issue asks for) and by the tests (the host check and
the stand-in's contract). Runs with the collection's own Python (it imports the collection from
build/collections); SGLang's verdicts come from tools/dev/flags/sglang_outcomes.py run with a venv's Python.

A case is ``{"name", "model", "draft"?, "args", "standin_differs"?}``: ``model`` names a folder of
tests/data/preflight_configs/models/ (its config.json; ``model_path`` is set to it), ``draft`` one for
``speculative_draft_model_path``; ``standin_differs`` says why the stand-in cannot agree with real SGLang there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "build" / "collections"))

# pylint: disable=wrong-import-position
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags import preflight  # noqa: E402
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.preflight import lint_for_host  # noqa: E402
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.preflight import render_for_report  # noqa: E402
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import split_secret_args  # noqa: E402

CONFIGS = ROOT / "tests" / "data" / "preflight_configs"
MODELS = CONFIGS / "models"
OUTCOMES = ROOT / "tools" / "dev" / "flags" / "sglang_outcomes.py"
DOC = ROOT / "docs" / "preflight.md"
RELEASE = "0.5.23"
FACTS = {"service_user": "sglang"}  # the role's unprivileged service account


def load_cases() -> List[dict]:
    """The configs, in file order."""
    return json.loads((CONFIGS / "configs.json").read_text(encoding="utf-8"))


def case_args(case: dict) -> dict:
    """The operator's sglang_server_args of a case, with the model folders filled in."""
    args = dict(case["args"])
    if case.get("model"):
        args.setdefault("model_path", str(MODELS / case["model"]))
    if case.get("draft"):
        args.setdefault("speculative_draft_model_path", str(MODELS / case["draft"]))
    return args


def sglang_config(args: dict) -> dict:
    """The operator's flags as a plain --config mapping for SGLang itself: dash keys, nulls left out."""
    return {str(key).lstrip("-").replace("_", "-"): value for key, value in args.items() if value is not None}


def table() -> dict:
    """The bundled flag table of the release checked."""
    return json.loads((ROOT / "data" / "sglang_flags" / (RELEASE + ".json")).read_text(encoding="utf-8"))


def lint_case(args: dict, flag_table: Optional[dict] = None):
    """The controller lint of one case, as the role runs it (model facts from the case's model folder)."""
    plain, secret = split_secret_args(args)
    params = {"sglang_version": RELEASE, "secret_args": secret, "facts": FACTS}
    merged = dict(plain, **secret)
    lint, dummy, extra = lint_for_host(merged, flag_table or table(), params, {})
    return lint, extra


CACHE = ROOT / "build" / "sglang-cpu" / "outcomes"
VENV_SCRIPT = ROOT / "tools" / "dev" / "sglang-cpu-venv"


def cpu_venv() -> Optional[str]:
    """The real SGLang CPU venv: $GPUFLEET_SGLANG_CPU_VENV (set by `make units`), else the cached build, else None."""
    named = os.environ.get("GPUFLEET_SGLANG_CPU_VENV")
    if named:
        return named
    if (ROOT / "build" / "sglang-cpu" / "0.5.23" / ".stamp").exists():
        done = subprocess.run([str(VENV_SCRIPT)], capture_output=True, text=True, check=True, timeout=1800)
        return done.stdout.strip().splitlines()[-1]
    return None


def _cache_key(python: str, job_text: str, env: Optional[Dict[str, str]]) -> Optional[str]:
    """Same venv build, same job, same environment: the same verdicts (SGLang's resolution is deterministic)."""
    stamp = Path(os.path.abspath(python)).parents[1] / ".stamp"  # bin/python is a link: do not resolve it
    if not stamp.exists():
        return None  # only the stamped CPU venv is cached; a stand-in venv is cheap to run
    models = [path.read_text(encoding="utf-8") for path in sorted(MODELS.rglob("config.json"))]  # read by path
    text = "\0".join([stamp.read_text(encoding="utf-8"), OUTCOMES.read_text(encoding="utf-8"), job_text,
                      json.dumps(env or {}, sort_keys=True)] + models)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_outcomes(python: str, cases: Iterable[dict], env: Optional[Dict[str, str]] = None,
                 timeout: int = 900, fresh: bool = False) -> dict:
    """SGLang's verdicts (sglang_outcomes.py) for job cases, in one process of ``python``.

    The verdicts of the real CPU venv are kept in build/sglang-cpu/outcomes/ by the job's content, so the tests
    and the benchmark that ask the same question pay SGLang's import once.
    """
    job_text = json.dumps({"host_check_script": preflight.HOST_CHECK_SCRIPT, "cases": list(cases)}, sort_keys=True)
    key = _cache_key(python, job_text, env)
    cached = CACHE / (key + ".json") if key else None
    if cached is not None and cached.exists() and not fresh:
        return json.loads(cached.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as directory:
        job = Path(directory) / "job.json"
        out = Path(directory) / "out.json"
        job.write_text(job_text, encoding="utf-8")
        run_env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
        run_env.update(env or {})
        done = subprocess.run([python, str(OUTCOMES), str(job), str(out)], capture_output=True, text=True,
                              env=run_env, timeout=timeout, check=False)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError("sglang_outcomes.py failed (rc %s): %s" % (done.returncode, done.stderr[-3000:]))
        result = json.loads(out.read_text(encoding="utf-8"))
    if cached is not None:
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(result), encoding="utf-8")
    return result


def documented_refusals() -> Dict[str, str]:
    """code -> reason, from the table under "Deliberate refusals" in docs/preflight.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Deliberate refusals", 1)[-1].split("\n## ", 1)[0]
    return {match.group(1): match.group(2).strip()
            for match in re.finditer(r"^\| `([a-z_]+)` \| (.+?) \|", section, re.M)}


def evaluate(python: str, cases: Optional[List[dict]] = None, fresh: bool = False) -> dict:
    """Lint every case, run SGLang and the host check in the venv, and compare."""
    cases = cases if cases is not None else load_cases()
    flag_table = table()
    linted = {}
    jobs = []
    for case in cases:
        args = case_args(case)
        lint, dummy = lint_case(args, flag_table)
        linted[case["name"]] = lint
        jobs.append({"name": "truth:" + case["name"], "kind": "truth", "config": sglang_config(args)})
        if not lint.errors:
            text, dummy = render_for_report(lint)
            jobs.append({"name": "host:" + case["name"], "kind": "host", "text": text})
    outcomes = run_outcomes(python, jobs, fresh=fresh)
    results = outcomes["results"]
    documented = documented_refusals()
    rows = []
    for case in cases:
        lint = linted[case["name"]]
        truth = results["truth:" + case["name"]]
        host = results.get("host:" + case["name"])
        lint_ok = not lint.errors
        preflight_ok = lint_ok and bool(host and host["ok"])
        codes = sorted({f["code"] for f in lint.errors})
        rows.append({"name": case["name"], "sglang_ok": truth["ok"], "sglang_error": truth["message"][:200],
                     "lint_ok": lint_ok, "lint_codes": codes, "host_ok": host["ok"] if host else None,
                     "host_error": (host or {}).get("message", "")[:200], "preflight_ok": preflight_ok,
                     "undocumented": [c for c in codes if c not in documented] if truth["ok"] and codes else []})
    return {"sglang_version": outcomes["sglang_version"], "rows": rows, "documented": documented,
            "truth": {case["name"]: results["truth:" + case["name"]] for case in cases}}


def counts(report: dict) -> dict:
    """The figures of the acceptance: how the preflight's verdicts compare with SGLang's."""
    rows = report["rows"]
    refused_by_sglang = [r for r in rows if not r["sglang_ok"]]
    accepted_by_sglang = [r for r in rows if r["sglang_ok"]]
    deliberate: Dict[str, int] = {}
    for row in accepted_by_sglang:
        if not row["preflight_ok"]:
            for code in row["lint_codes"] or ["host_check_refused"]:
                deliberate[code] = deliberate.get(code, 0) + 1
    return {
        "sglang_version": report["sglang_version"],
        "configs": len(rows),
        "sglang_accepts": len(accepted_by_sglang),
        "sglang_refuses": len(refused_by_sglang),
        "preflight_passes_but_sglang_refuses": len([r for r in refused_by_sglang if r["preflight_ok"]]),
        "lint_passes_but_sglang_refuses": len([r for r in refused_by_sglang if r["lint_ok"]]),
        "caught_by_lint": len([r for r in refused_by_sglang if not r["lint_ok"]]),
        "caught_by_host_check_only": len([r for r in refused_by_sglang if r["lint_ok"] and not r["preflight_ok"]]),
        "preflight_refuses_but_sglang_accepts": len([r for r in accepted_by_sglang if not r["preflight_ok"]]),
        "host_check_refuses_but_sglang_accepts": len([r for r in accepted_by_sglang
                                                      if r["lint_ok"] and not r["preflight_ok"]]),
        "deliberate_refusals_by_code": dict(sorted(deliberate.items())),
        "undocumented_refusals": sorted({c for r in rows for c in r["undocumented"]}),
        "preflight_agrees": len([r for r in rows if r["preflight_ok"] == r["sglang_ok"]]),
    }
