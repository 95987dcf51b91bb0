#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_cache_verify: is a model folder complete enough for SGLang to load, and if not, which file is wrong."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: model_cache_verify
short_description: Check a local model folder (config, tokenizer, every safetensors shard) before SGLang loads it
version_added: 0.1.0
description:
  - Checks that C(config.json) is there and is JSON, that a tokenizer file is there, and that every shard named
    in C(model.safetensors.index.json) (or the single C(model.safetensors)) is present, holds the tensors the
    index puts there, and has exactly the size its own safetensors header promises, so a truncated shard is
    found from its first few KB.
  - With O(expected) (or O(manifest)) every listed file must also be there with exactly the listed size.
  - Fails naming every bad file (RV(problems)); with O(fail_on_problems=false) it only reports them, and
    RV(missing) lists the expected files to (re)copy.
  - With O(check_space=true) it also checks, before a copy, that the files in RV(missing) fit in the free space
    of the folder's file system with O(min_free_margin) to spare, failing with both numbers.
  - Why this exists, SGLang finds a missing or short shard only when it maps it, minutes into its start, with an error
    about a tensor rather than a file. This check takes a fraction of a second and names the file.
  - Read-only.
author:
  - gpufleet maintainers (@gpufleet)
options:
  path:
    description: The model folder (a hub cache snapshot, a copy, or a path on an NFS mount).
    type: path
    required: true
  expected:
    description: Relative path to size in bytes of files that must be there (the copy source's listing).
    type: dict
    default: {}
  manifest:
    description: A manifest written by P(gpufleet.sglang.model_cache_hub#module); its files and sizes are expected.
    type: path
  require_tokenizer:
    description: Require a tokenizer file (C(tokenizer.json), C(tokenizer.model), C(vocab.json), ...).
    type: bool
    default: true
  verify_checksums:
    description: Also compare the sha256 of the files the manifest has one for (reads every byte).
    type: bool
    default: false
  fail_on_problems:
    description: Fail when a problem is found; C(false) reports only.
    type: bool
    default: true
  check_space:
    description: Check that RV(missing) fits on the folder's file system (O(min_free_margin) included).
    type: bool
    default: false
  min_free_margin:
    description: Free space to keep beyond what is copied, C(10%) or a size like C(20GiB).
    type: str
    default: "10%"
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.sglang.read_only
seealso:
  - module: gpufleet.sglang.model_cache_hub
    description: Fetches a hub revision and runs the same checks on it.
"""

EXAMPLES = r"""
- name: Check a model on an NFS mount before pointing SGLang at it
  gpufleet.sglang.model_cache_verify:
    path: /mnt/models/Qwen3-27B

- name: What of the controller's copy is missing here, and does it fit
  gpufleet.sglang.model_cache_verify:
    path: /var/lib/sglang/models/local/Qwen--Qwen3-27B
    expected: "{{ source_files }}"
    fail_on_problems: false
    check_space: true
  register: have
"""

RETURN = r"""
ok:
  description: Whether no problem was found.
  returned: always
  type: bool
problems:
  description: One entry per bad file, sorted by file.
  returned: always
  type: list
  elements: dict
  contains:
    file:
      description: Path relative to O(path) (C(tokenizer) when no tokenizer file exists).
      type: str
    kind:
      description: C(missing), C(truncated), C(size), C(tensors), C(unreadable) or C(checksum).
      type: str
    detail:
      description: What is wrong, with the numbers.
      type: str
  sample: [{"file": "model-00002-of-00003.safetensors", "kind": "truncated",
            "detail": "truncated: 4096 of 7328 bytes (its header says the tensors end at byte 7328)"}]
files:
  description: Every file in the folder with its size.
  returned: always
  type: dict
total_bytes:
  description: Sum of RV(files).
  returned: always
  type: int
shards:
  description: The safetensors shards the folder must hold.
  returned: always
  type: list
  elements: str
missing:
  description: Expected files that are absent or of another size, with the expected size.
  returned: always
  type: dict
missing_bytes:
  description: Sum of RV(missing).
  returned: always
  type: int
free_bytes:
  description: Free bytes of the folder's file system (0 unless O(check_space=true)).
  returned: always
  type: int
"""

from typing import Any, Dict

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.hub import read_manifest
from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.space import check_space, free_bytes
from ansible_collections.gpufleet.sglang.plugins.module_utils.model_cache.verify import describe_problems, verify_model_dir


def run(params: Dict[str, Any]) -> Dict[str, Any]:
    """Verify; returns the result, with ``failed_msg`` set when the module must fail."""
    expected = {str(k): int(v) for k, v in (params["expected"] or {}).items()}
    checksums: Dict[str, str] = {}
    if params["manifest"]:
        manifest = read_manifest(params["manifest"])
        if manifest is None:
            return {"failed_msg": "the manifest %s is missing or unreadable" % params["manifest"]}
        expected.update({str(k): int(v) for k, v in manifest["files"].items()})
        checksums = dict(manifest.get("sha256") or {}) if params["verify_checksums"] else {}
    report = verify_model_dir(params["path"], expected=expected, require_tokenizer=params["require_tokenizer"],
                              checksums=checksums)
    bad = {p["file"] for p in report["problems"]}
    missing = {rel: size for rel, size in expected.items() if rel in bad or report["files"].get(rel) != size}
    result = dict(report, missing=missing, missing_bytes=sum(missing.values()), free_bytes=0)
    if params["check_space"] and missing:
        result["free_bytes"] = free_bytes(params["path"])
        problem = check_space(result["missing_bytes"], result["free_bytes"], params["min_free_margin"], params["path"],
                              "the %d file(s) to copy" % len(missing))
        if problem:
            result["failed_msg"] = problem
            return result
    if report["problems"] and params["fail_on_problems"]:
        result["failed_msg"] = describe_problems(report["problems"], params["path"])
    else:
        result["msg"] = ("%s: %d files, %s shard(s), complete" % (params["path"], len(report["files"]), len(report["shards"]))
                         if report["ok"] else describe_problems(report["problems"], params["path"]))
    return result


def main() -> None:
    """Entry point."""
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            expected=dict(type="dict", default={}),
            manifest=dict(type="path"),
            require_tokenizer=dict(type="bool", default=True),
            verify_checksums=dict(type="bool", default=False),
            fail_on_problems=dict(type="bool", default=True),
            check_space=dict(type="bool", default=False),
            min_free_margin=dict(type="str", default="10%"),
        ),
        supports_check_mode=True,
    )
    result = run(module.params)
    failed_msg = result.pop("failed_msg", None)
    if failed_msg:
        module.fail_json(msg=failed_msg, **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
