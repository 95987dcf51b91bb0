#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lint SGLang launch flags for a release, check them with the installed SGLang's parser, write the config file."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: sglang_preflight
short_description: Check SGLang launch flags against the installed release before anything restarts
version_added: 0.1.0
description:
  - Lints O(server_args), a dict keyed by SGLang's option names, against the flag table of the SGLang release
    O(sglang_version) and that release's cross-flag rules. Keys may be written C(tp_size), C(tp-size) or
    C(--tp-size); abbreviations such as C(tp) are refused.
  - Reports unknown flags with the closest known names, flags the release removed or renamed with their
    replacement, deprecated flags, wrong types, choices and list shapes, and combinations SGLang refuses, with
    SGLang's own message where it has one and a fix. Every problem is reported at once.
  - When O(venv) is given, also runs the argument parser of the SGLang installed in that venv on the rendered
    config file (parse only, no GPU, bounded by O(parser_timeout)), and merges its verdict into the same report.
  - When O(dest) is given and nothing is an error, writes the YAML file that C(sglang serve --config) reads,
    byte-for-byte deterministic, so unchanged flags leave it unchanged and cause no restart. Secrets appear only
    in that file.
  - Fails when any finding reaches O(fail_on), listing every such finding in RV(msg).
  - The action plugin of the same name loads the flag table from the collection's C(data/sglang_flags) on the
    controller. Without O(venv) and O(dest) it lints there and never contacts the host; otherwise it runs this
    module on the target with the table.
author:
  - gpufleet maintainers (@gpufleet)
options:
  server_args:
    description:
      - The launch flags, keyed by SGLang option names (C(model_path), C(tp_size), ...). Values are YAML
        scalars, lists for options that take several values, or mappings for JSON-valued options.
      - A null value leaves the option out of the config file, so SGLang uses its default.
      - Keys whose value is secret (C(api_key), C(admin_api_key), C(ssl_keyfile_password), anything with
        C(token), C(secret) or C(password) in its name) are moved by the action plugin into O(secret_args), so
        only they are masked by C(no_log).
    type: dict
    required: true
  secret_args:
    description:
      - Secret launch flags, merged over O(server_args). Filled by the action plugin from O(server_args); set it
        yourself to keep secrets out of O(server_args) entirely.
    type: dict
    default: {}
  sglang_version:
    description:
      - The SGLang release the flags are for, for example C(0.5.23).
      - A release between two bundled tables (0.5.11, 0.5.13, 0.5.15-0.5.17, 0.5.21) is linted with the nearest
        older table and an info finding; a release outside the bundled range is an error.
    type: str
    required: true
  venv:
    description:
      - Path of the virtual environment SGLang is installed in, on the target. When given, the module also runs
        C(<venv>/bin/python) with SGLang's own C(prepare_server_args) on the rendered config file, stopping right
        after argument parsing. It needs about 1 GB of memory and 6-9 s on a real install, and no GPU.
      - In check mode a missing venv (a fresh host) skips this check with an info finding.
    type: path
  dest:
    description:
      - Where to write the config file on the target, for example C(/etc/sglang/default.yaml). Written only when
        no finding is an error, atomically, and only when its content changes.
    type: path
  owner:
    description: Owner of O(dest).
    type: str
  group:
    description: Group of O(dest); give the service's group so SGLang can read it.
    type: str
  mode:
    description: Permissions of O(dest). The file holds secrets, so keep it unreadable to others.
    type: raw
    default: '0640'
  parser_timeout:
    description: Seconds the parse-only check may take before it is killed and reported.
    type: int
    default: 60
  facts:
    description:
      - Host facts for the hardware rules, all optional. C(gpu_p2p) (bool) false warns when custom all-reduce
        stays on; C(service_user) (str) is the account the service runs as, for the privileged-port rule.
    type: dict
    default: {}
  fail_on:
    description:
      - The severity that fails the task. C(never) always returns the report (the preflight playbook uses it to
        print every host's report before failing).
    type: str
    default: error
    choices: [error, warning, never]
  flag_table:
    description:
      - The flag table to lint against, in the format of C(data/sglang_flags/<release>.json), optionally with a
        C(history) key (option -> releases) used to report removed flags. The action plugin fills it; set it only
        to lint against a table of your own.
    type: dict
  tables_dir:
    description:
      - Controller directory with C(<release>.json) flag tables, used by the action plugin instead of the
        collection's C(data/sglang_flags).
    type: path
attributes:
  check_mode:
    support: full
    description: Lints and runs the parse-only check, and reports whether O(dest) would change, without writing it.
  diff_mode:
    support: full
    description: Shows the change to O(dest), with secrets masked.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller for the lint alone; on Linux targets for the parser check and the file.
notes:
  - The real-parser check runs C(python -c ... --config <file>) in the venv; to run it by hand use
    C(<venv>/bin/python -c 'import sys; from sglang.srt.server_args import prepare_server_args;
    prepare_server_args(sys.argv[1:])' --config <file>.yaml). On releases up to 0.5.18 that also resolves the
    flags against the model and the GPUs, which the module avoids by stopping after argparse.
  - Secrets never appear in the returned values; C(api_key) and similar are shown as C(********).
seealso:
  - name: SGLang server arguments
    description: The option reference of the SGLang release in use.
    link: https://docs.sglang.io/advanced_features/server_arguments.html
"""

EXAMPLES = r"""
- name: Lint the launch flags on the controller (no connection to the host)
  gpufleet.sglang.sglang_preflight:
    server_args: "{{ sglang_server_args }}"
    sglang_version: "{{ sglang_install_version }}"
  delegate_to: localhost

- name: Check with the installed SGLang's parser and write the config file when clean
  gpufleet.sglang.sglang_preflight:
    server_args:
      model_path: /srv/models/Qwen3-8B
      tp_size: 2
      speculative_algorithm: EAGLE
      host: 0.0.0.0
      api_key: "{{ vault_sglang_api_key }}"
    sglang_version: "0.5.23"
    venv: /opt/sglang/venv
    dest: /etc/sglang/default.yaml
    owner: root
    group: sglang
    facts:
      gpu_p2p: "{{ gpu_facts.p2p_all | default(omit) }}"
  register: preflight

- name: Report every finding without failing, then decide
  gpufleet.sglang.sglang_preflight:
    server_args: "{{ sglang_server_args }}"
    sglang_version: "{{ sglang_install_version }}"
    fail_on: never
  register: lint

- name: Show the findings
  ansible.builtin.debug:
    var: lint.report
"""

RETURN = r"""
msg:
  description: Summary; when the task fails, every error (and warning with O(fail_on=warning)) with its fix.
  returned: always
  type: str
  sample: "SGLang 0.5.12 would not run these launch flags as intended (1 error, 1 warning, 0 info). language_only: ..."
findings:
  description: Every finding of the lint and of the parser, errors first.
  returned: always
  type: list
  elements: dict
  contains:
    severity:
      description: C(error) (SGLang would refuse or crash), C(warning) (accepted but surprising) or C(info).
      type: str
      sample: error
    code:
      description: Stable identifier of the rule or check.
      type: str
      sample: removed_flag
    flag:
      description: Option name (underscore spelling) the finding is about; empty when none.
      type: str
      sample: enforce_piecewise_cuda_graph
    message:
      description: What is wrong, in SGLang's own words where it has them.
      type: str
      sample: "SGLang 0.5.23 no longer has --enforce-piecewise-cuda-graph (last in 0.5.19); ..."
    hint:
      description: What to change.
      type: str
      sample: "Use cuda_graph_backend_prefill: breakable instead (...)."
    source:
      description: C(lint) (flag tables and rules) or C(parser) (the installed SGLang).
      type: str
      sample: lint
summary:
  description: Number of findings per severity.
  returned: always
  type: dict
  sample: {"error": 1, "warning": 1, "info": 0}
report:
  description: One readable line per finding.
  returned: always
  type: list
  elements: str
sglang_version:
  description: The release the flags were linted for.
  returned: always
  type: str
  sample: "0.5.23"
table_version:
  description: The release of the flag table used (the nearest older one for releases without a table).
  returned: always
  type: str
  sample: "0.5.23"
args:
  description: The flags as they will be passed, normalised, keyed as given (underscore spelling); secrets masked.
  returned: always
  type: dict
  sample: {"model_path": "/srv/models/Qwen3-8B", "tp_size": 2, "api_key": "********"}
config:
  description: The rendered config file with secrets masked.
  returned: always
  type: str
config_sha256:
  description: SHA-256 of the config file as written (with its secrets), to compare installed files.
  returned: when the module ran on the target
  type: str
parser:
  description: The parse-only run of the installed SGLang.
  returned: always
  type: dict
  contains:
    ran:
      description: Whether it ran.
      type: bool
    rc:
      description: Its exit status.
      type: int
    seconds:
      description: How long it took.
      type: float
    error:
      description: The line that says what failed, secrets masked.
      type: str
    sglang_version:
      description: The SGLang version installed in the venv.
      type: str
dest:
  description: The config file path, when O(dest) was given.
  returned: when O(dest) is given
  type: str
written:
  description: Whether O(dest) was (or in check mode would be) rewritten with new content.
  returned: when O(dest) is given
  type: bool
"""

import os
import re
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import finding
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.lint import lint_server_args
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.table import FlagTableError
from ansible_collections.gpufleet.sglang.plugins.module_utils.secrets import (
    MASK,
    MIN_SECRET_LEN,
    is_secret_name,
    redact,
    secret_values,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.preflight import (
    ARGUMENT_SPEC,
    build_result,
    interpret_parser_run,
    merge_secret_args,
    parser_command,
    render_for_report,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import config_sha256

_YAML_KEY_LINE = re.compile(r"^(\s*-?\s*)([A-Za-z0-9_-]+)(\s*:\s*)(.+)$")


def redact_config_text(text: str, secrets: list) -> str:
    """Mask secret values in a config file read back from disk (for the diff of the file being replaced)."""
    out = []
    for line in text.splitlines(True):
        match = _YAML_KEY_LINE.match(line)
        if match and is_secret_name(match.group(2)):
            line = "%s%s%s%s\n" % (match.group(1), match.group(2), match.group(3), MASK)
        out.append(redact(line, secrets))
    return "".join(out)


def run_parser(module: AnsibleModule, venv: str, config_text: str, timeout: int, release: str) -> tuple:
    """Run the installed SGLang's parser on the rendered config; (findings, parser summary)."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        if module.check_mode:
            return [finding("info", "parser_skipped", None,
                            "%s does not exist yet (check mode on a host without the venv); the parse-only check "
                            "was skipped" % python, "", "parser")], {"ran": False, "error": "no venv"}
        return [finding("error", "parser_unavailable", None, "%s does not exist" % python,
                        "Install SGLang in the venv first (sglang_install), or fix venv.", "parser")], \
            {"ran": False, "error": "no venv"}
    config_path = os.path.join(module.tmpdir, "sglang-preflight.yaml")
    descriptor = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(to_bytes(config_text))
        command = parser_command(python, config_path, timeout, module.get_bin_path("timeout"))
        started = time.monotonic()
        rc, out, err = module.run_command(command, cwd=module.tmpdir,
                                          environ_update={"HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"})
        seconds = time.monotonic() - started
    finally:
        if os.path.exists(config_path):
            os.unlink(config_path)
    return interpret_parser_run(rc, out, err, seconds, timeout, release)


def _fail(module: AnsibleModule, msg: str, result: dict) -> None:
    module.fail_json(msg=msg, **{key: value for key, value in result.items() if key not in ("msg", "failed")})


def write_config(module: AnsibleModule, dest: str, text: str, result: dict) -> None:
    """Install the config file atomically when its content differs; then owner, group and mode."""
    params = module.params
    directory = os.path.dirname(dest) or "."
    if not os.path.isdir(directory):
        _fail(module, "cannot write %s: directory %s does not exist; create it first (the sglang_server role does)"
              % (dest, directory), result)
    data = to_bytes(text)
    before = None
    if os.path.exists(dest):
        with open(dest, "rb") as handle:
            before = handle.read()
    written = before != data
    secret_args = params["secret_args"] or {}
    secrets = secret_values(merge_secret_args(params["server_args"], secret_args) or {}, list(secret_args))
    if module._diff and written:
        result["diff"] = {
            "before_header": dest,
            "after_header": dest,
            "before": redact_config_text(to_native(before or b"", errors="surrogate_or_replace"), secrets),
            "after": result["config"],
        }
    if written and not module.check_mode:
        descriptor, tmp_path = tempfile.mkstemp(dir=directory, prefix=".sglang-config-", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as handle:  # mkstemp: mode 0600 until the rename
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_path, dest)
        except OSError as exc:
            if os.path.exists(tmp_path):
                os.unlink(tmp_path)
            _fail(module, "cannot write %s: %s" % (dest, to_native(exc)), result)
    changed = written
    if os.path.exists(dest):
        changed = module.set_owner_if_different(dest, params["owner"], changed)
        changed = module.set_group_if_different(dest, params["group"], changed)
        changed = module.set_mode_if_different(dest, params["mode"], changed)
    result.update(changed=changed, dest=dest, written=written)


def main() -> None:
    """Lint, render, optionally run the installed parser and write the file; fail on findings at fail_on."""
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    table = params["flag_table"]
    if not table:
        module.fail_json(msg="sglang_preflight needs the flag table of SGLang %s: run it as gpufleet.sglang."
                             "sglang_preflight, whose action plugin loads data/sglang_flags/<release>.json on the "
                             "controller, or pass flag_table" % params["sglang_version"])
    server_args = merge_secret_args(params["server_args"], params["secret_args"])
    if isinstance(server_args, dict):
        # Secret-named flags given in server_args itself: Ansible masks their values in everything it prints.
        module.no_log_values.update(value for value in secret_values(server_args) if len(value) >= MIN_SECRET_LEN)
    try:
        lint = lint_server_args(server_args, table, params["sglang_version"], table.get("history"), params["facts"],
                                secret_names=list(params["secret_args"] or {}))
    except FlagTableError as exc:
        module.fail_json(msg="flag_table is not a flag table: %s" % exc)

    text, dummy = render_for_report(lint)
    parser_findings, parser_info = [], {"ran": False}
    if params["venv"]:
        parser_findings, parser_info = run_parser(module, params["venv"], text, params["parser_timeout"],
                                                  lint.release)

    result = build_result(lint, parser_findings, parser_info, params["fail_on"])
    result["config_sha256"] = config_sha256(text)
    failed = result.pop("failed")
    errors = result["summary"]["error"]
    if params["dest"]:
        if errors:
            result.update(dest=params["dest"], written=False)
            result["msg"] += " -- %s left unchanged because of the errors." % params["dest"]
        else:
            write_config(module, params["dest"], text, result)
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
