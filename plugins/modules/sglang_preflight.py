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
  - Reports unknown flags (with a guess only when a name is a near typo), flags the release removed or renamed
    with their replacement, deprecated flags, wrong types (each with its fix), choices, list shapes and JSON
    values, combinations SGLang refuses, and values SGLang accepts but that cannot start or expose the server
    (C(mem_fraction_static) in O(server_args) outside (0, 1), a privileged port, an open host without an API key), with
    SGLang's own message where it has one. Every problem is reported at once; messages name the variable
    (O(variable)).
  - When the model's C(config.json) is known (O(model_config), or found in the model folder or the hub cache),
    also checks what depends on it - encoder disaggregation architectures, C(context_length) against the
    derived maximum, the attention and KV heads split by C(tp_size), C(quantization) against the checkpoint's
    C(quantization_config), and a speculative draft model's shape.
  - When O(venv) is given, also runs the host check in that venv on the rendered config file - SGLang's own
    C(prepare_server_args), then, when the model's config is on the host and O(resolve) is true,
    C(resolve_once) and C(check_server_args) (with C(--device cuda) where torch sees no GPU) - and merges its
    verdict into the same report. When the weights are not there yet, it says that resolution was skipped and
    why.
  - When O(dest) is given and nothing is an error, writes the YAML file that C(sglang serve --config) reads,
    byte-for-byte deterministic, so unchanged flags leave it unchanged and cause no restart. Secrets appear only
    in that file.
  - Fails when any finding reaches O(fail_on), listing every such finding in RV(msg).
  - The action plugin of the same name loads the flag table from O(tables_dir) or the collection's
    C(data/sglang_flags) on the controller. Without O(venv) and O(dest) it lints there and never contacts the
    host; otherwise it runs this module on the target with the table. For a release with no table it first
    dumps one from the host's own parser (O(dump_table)) and keeps it in O(tables_dir).
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
      - The SGLang release the flags are for, for example C(0.5.23), C(v0.5.23) or C(0.5.23.post1).
      - A pre-release, dev or local version (C(0.5.24rc1), C(0.5.24.dev3), C(0.5.23+cu130)) is refused unless
        O(release_map) maps it to a release.
      - A release between two bundled tables is linted with the nearest older table and an info finding, unless
        a table of its own is in O(tables_dir) or, with O(venv), is dumped from the host.
    type: str
    required: true
  release_map:
    description:
      - >-
        Explicit mapping of version strings that are not releases to the release whose flags and rules they
        have, for example C({'0.5.24rc1': '0.5.23'}). Applies to O(sglang_version) and to the version the venv
        reports.
    type: dict
    default: {}
  venv:
    description:
      - Path of the virtual environment SGLang is installed in, on the target. When given, the module also runs
        the host check with C(<venv>/bin/python) on the rendered config file; it needs about 1 GB of memory and
        6-9 s on a real install (a few seconds more with resolution).
      - In check mode a missing venv (a fresh host) skips this check with an info finding.
    type: path
  resolve:
    description:
      - Run SGLang's C(resolve_once) and C(check_server_args) in the host check when the model's C(config.json)
        (and a draft model's) is on the host; false stops after SGLang's argument parser.
      - Resolution is also skipped, with an info finding, while the lint has errors.
    type: bool
    default: true
  service_env:
    description:
      - The service's environment variables (C(HF_HOME), C(CUDA_VISIBLE_DEVICES), C(SGLANG_*), ...). The host
        check and the dump run with them (and always with C(HF_HUB_OFFLINE=1)); the model's config is looked up
        in the hub cache they name; C(SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN) relaxes the context_length check.
    type: dict
    default: {}
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
    description: Seconds the host check (or the dump) may take before it is killed and reported.
    type: int
    default: 60
  facts:
    description:
      - Host facts for the hardware rules, all optional. C(gpu_p2p) (bool) false warns when custom all-reduce
        stays on; C(service_user) (str) is the account the service runs as, for the privileged-port rule (unknown
        counts as unprivileged); C(environment) (dict, default O(service_env)) holds the service's variables.
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
      - Controller directory for flag tables dumped from hosts (C(<release>.json)), searched before the
        collection's C(data/sglang_flags) and written when a release has no table. It must not lie inside the
        installed collection. Used by the action plugin.
    type: path
  dump_table:
    description:
      - Only dump the flag table of the SGLang in O(venv) from its own parser and return it as RV(flag_table);
        nothing is linted or written. The action plugin uses it for a release without a table.
    type: bool
    default: false
  rules_release:
    description:
      - The release whose cross-flag rules apply, when O(sglang_version) is newer than every release the
        collection knows (the action plugin sets the nearest known one and the report says so).
    type: str
  model_config:
    description:
      - The content of the model's C(config.json), when the caller has it; otherwise it is looked up from
        C(model_path) (a local folder, or the hub cache of O(service_env)).
    type: dict
  draft_model_config:
    description: The content of the speculative draft model's C(config.json), as O(model_config).
    type: dict
  allow_open_without_api_key:
    description:
      - Accept a C(host) open to the network without an C(api_key) (a warning instead of an error), for a network
        closed by other means. The role sets it from C(sglang_server_allow_open_without_api_key).
    type: bool
    default: false
  variable:
    description: The name messages give the flags, for example C(sglang_server_args) (C(sglang_server_args.tp_size)).
    type: str
    default: sglang_server_args
attributes:
  check_mode:
    support: full
    description: Lints and runs the host check, and reports whether O(dest) would change, without writing it.
  diff_mode:
    support: full
    description: Shows the change to O(dest), with secrets masked.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller for the lint alone; on Linux targets for the host check and the file.
notes:
  - The host check runs C(python -c ... --config <file>) in the venv; to run SGLang's own path by hand use
    C(<venv>/bin/python -c 'import sys; from sglang.srt.server_args import prepare_server_args;
    a = prepare_server_args(sys.argv[1:]); a.resolve_once(); a.check_server_args()' --config <file>.yaml)
    (add C(--device cuda) on a host without GPUs).
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
      description: C(lint) (flag tables and rules), C(parser) (the installed SGLang's parser) or C(host)
        (its resolution on the host).
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
  description: The host check with the installed SGLang.
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
    mode:
      description: C(resolve) (SGLang's resolution ran) or C(parse) (its argument parser only).
      type: str
    resolved:
      description: Whether SGLang's resolve_once and check_server_args accepted the flags (null when not run).
      type: bool
    resolve_skipped:
      description: Why resolution was not run, when it was not.
      type: str
    device_added:
      description: Whether C(--device cuda) was added because torch saw no GPU on the host.
      type: bool
flag_table:
  description: The dumped flag table, with O(dump_table).
  returned: with O(dump_table)
  type: dict
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

from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.dump import dump_command, read_dump_output
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.findings import finding
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.releases import ReleaseError
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
    lint_for_host,
    merge_secret_args,
    parser_command,
    release_error_result,
    render_for_report,
    resolution_plan,
)
from ansible_collections.gpufleet.sglang.plugins.module_utils.flags.server_config import config_sha256

_YAML_KEY_LINE = re.compile(r"^(\s*-?\s*)([A-Za-z0-9_-]+)(\s*:\s*)(.+)$")
# What the host check always runs with: no download, no byte-code files in the service venv.
CHECK_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def redact_config_text(text: str, secrets: list) -> str:
    """Mask secret values in a config file read back from disk (for the diff of the file being replaced)."""
    out = []
    for line in text.splitlines(True):
        match = _YAML_KEY_LINE.match(line)
        if match and is_secret_name(match.group(2)):
            line = "%s%s%s%s\n" % (match.group(1), match.group(2), match.group(3), MASK)
        out.append(redact(line, secrets))
    return "".join(out)


def service_environ(module: AnsibleModule) -> dict:
    """The environment SGLang will see: this process's, with the service's own variables over it."""
    environ = dict(os.environ)
    environ.update({str(k): str(v) for k, v in (module.params["service_env"] or {}).items()})
    return environ


def venv_python(module: AnsibleModule, venv: str) -> tuple:
    """(path of the venv's python, None) or (None, the findings and summary that say why there is none)."""
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python):
        return python, None
    if module.check_mode:
        return None, ([finding("info", "parser_skipped", None,
                               "%s does not exist yet (check mode on a host without the venv); the host check was "
                               "skipped" % python, "", "parser")], {"ran": False, "error": "no venv"})
    return None, ([finding("error", "parser_unavailable", None, "%s does not exist" % python,
                           "Install SGLang in the venv first (sglang_install), or fix venv.", "parser")],
                  {"ran": False, "error": "no venv"})


def run_host_check(module: AnsibleModule, venv: str, config_text: str, mode: str, release: str) -> tuple:
    """Run the installed SGLang's own path on the rendered config; (findings, summary)."""
    python, missing = venv_python(module, venv)
    if python is None:
        return missing
    timeout = module.params["parser_timeout"]
    config_path = os.path.join(module.tmpdir, "sglang-preflight.yaml")
    descriptor = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    environ = {str(k): str(v) for k, v in (module.params["service_env"] or {}).items()}
    environ.update(CHECK_ENV)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(to_bytes(config_text))
        command = parser_command(python, config_path, timeout, module.get_bin_path("timeout"), mode)
        started = time.monotonic()
        rc, out, err = module.run_command(command, cwd=module.tmpdir, environ_update=environ)
        seconds = time.monotonic() - started
    finally:
        if os.path.exists(config_path):
            os.unlink(config_path)
    findings, info = interpret_parser_run(rc, out, err, seconds, timeout, release, module.params["release_map"])
    info["mode"] = mode
    return findings, info


def dump_flag_table(module: AnsibleModule) -> None:
    """Dump mode: the flag table of the venv's SGLang, from its own parser (a release without a bundled table)."""
    venv = module.params["venv"]
    if not venv:
        module.fail_json(msg="dump_table needs venv: the SGLang whose parser is dumped")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        module.fail_json(msg="cannot dump the flag table: %s does not exist; install SGLang first (sglang_install)"
                         % python)
    environ = {str(k): str(v) for k, v in (module.params["service_env"] or {}).items()}
    environ.update(CHECK_ENV)
    command = dump_command(python, module.params["parser_timeout"], module.get_bin_path("timeout"))
    rc, out, err = module.run_command(command, cwd=module.tmpdir, environ_update=environ)
    table, problem = read_dump_output(rc, out, err)
    if table is None:
        module.fail_json(msg="cannot dump the flag table of the SGLang in %s: %s" % (venv, redact(problem)))
    module.exit_json(changed=False, flag_table=table, sglang_version=table["sglang_version"])


def _fail(module: AnsibleModule, msg: str, result: dict) -> None:
    module.fail_json(msg=msg, **{key: value for key, value in result.items() if key not in ("msg", "failed")})


def write_config(module: AnsibleModule, dest: str, text: str, result: dict) -> None:
    """Install the config file atomically when its content differs; then owner, group and mode."""
    params = module.params
    directory = os.path.dirname(dest) or "."
    if not os.path.isdir(directory) and not module.check_mode:  # in check mode the role's folder task only said it would
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
    """Lint, render, run the host check in the venv and write the file; fail on findings at fail_on."""
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    if params["dump_table"]:
        dump_flag_table(module)
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
        lint, models, extra = lint_for_host(server_args, table, params, service_environ(module))
    except FlagTableError as exc:
        module.fail_json(msg="flag_table is not a flag table: %s" % exc)
    except ReleaseError as exc:
        result = release_error_result(exc, params["sglang_version"], params["fail_on"])
        if result.pop("failed"):
            module.fail_json(**result)
        module.exit_json(**result)

    text, dummy = render_for_report(lint)
    host_findings, host_info = [], {"ran": False}
    if params["venv"]:
        mode, skipped = resolution_plan(params["resolve"], lint, models)
        host_findings, host_info = run_host_check(module, params["venv"], text, mode, lint.release)
        if skipped is not None and host_info.get("ran"):
            host_findings.append(skipped)
            host_info["resolve_skipped"] = skipped["message"]

    result = build_result(lint, host_findings, host_info, params["fail_on"], extra, params["variable"])
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
