#!/usr/bin/env python
"""The preflight (controller lint plus the host check) against real SGLang 0.5.23 on the project's own configs.

Reads ``tests/data/preflight_configs/configs.json`` (launch configs written for this check, over the small
model configs of ``tests/data/preflight_configs/models/``), and for each one:

- lints it as the role does (flag table of 0.5.23, the model's config.json, the unprivileged service account);
- asks real SGLang, in the CPU venv of ``tools/dev/sglang-cpu-venv``: the operator's flags written as a
  ``--config`` file, then ``prepare_server_args``, ``resolve_once``, ``check_server_args`` (``--device cuda``);
- runs the collection's host check (the module's own script) on the file the lint rendered, when the lint passed.

It prints one JSON object: ``configs``, ``sglang_accepts`` / ``sglang_refuses``, the acceptance figure
``preflight_passes_but_sglang_refuses`` (must be 0), how the refusals were caught (``caught_by_lint``,
``caught_by_host_check_only``, ``lint_passes_but_sglang_refuses``), ``preflight_refuses_but_sglang_accepts`` with
``deliberate_refusals_by_code`` (each code listed with its reason in docs/preflight.md#deliberate-refusals) and
``undocumented_refusals`` (must be empty), and ``seconds``. It exits 1 when either acceptance figure fails.

    benchmarks/preflight_agreement.py [--venv PATH] [--rows] [--fresh]

--rows adds every config's verdicts; SGLang's verdicts are kept in build/sglang-cpu/outcomes/ by the content of
the question (configs, model files, the host-check script, the venv build), --fresh asks SGLang again.

Without --venv it builds or reuses the CPU venv (tools/dev/sglang-cpu-venv; a few minutes the first time).
"""

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_agreement():
    spec = importlib.util.spec_from_file_location("agreement", ROOT / "tools" / "dev" / "flags" / "agreement.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    cli.add_argument("--venv", help="a venv with SGLang 0.5.23 (default: tools/dev/sglang-cpu-venv)")
    cli.add_argument("--rows", action="store_true", help="also print every config's verdicts")
    cli.add_argument("--fresh", action="store_true", help="ask SGLang again instead of reusing its kept verdicts")
    options = cli.parse_args()
    venv = options.venv or subprocess.run([str(ROOT / "tools" / "dev" / "sglang-cpu-venv")], check=True,
                                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    agreement = load_agreement()
    started = time.monotonic()
    report = agreement.evaluate(str(Path(venv) / "bin" / "python"), fresh=options.fresh)
    out = agreement.counts(report)
    out["seconds"] = round(time.monotonic() - started, 1)
    if options.rows:
        out["rows"] = report["rows"]
    print(json.dumps(out, indent=1))
    return 0 if out["preflight_passes_but_sglang_refuses"] == 0 and not out["undocumented_refusals"] else 1


if __name__ == "__main__":
    sys.exit(main())
