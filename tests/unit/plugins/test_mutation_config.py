# -*- coding: utf-8 -*-
"""tests/mutation/modules.yml (make mutation) covers every module of module_utils/ and plugin_utils/.

Why: a module without an entry is never mutation-tested and no score says so, and an entry whose tests never
import the module cannot kill a single mutant (the runner serves the mutant under the module's import name).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List, Set

import pytest
import yaml

from test_architecture import imported_modules  # one reading of a file's imports for both tests

ROOT = Path(__file__).resolve().parents[3]
SOURCE_DIRS = ("plugins/module_utils", "plugins/plugin_utils")
CONFIG = yaml.safe_load((ROOT / "tests" / "mutation" / "modules.yml").read_text(encoding="utf-8"))
ENTRIES = CONFIG["modules"]
PREFIX = "ansible_collections.gpufleet.sglang."


def modules_on_disk() -> List[str]:
    """Each module as modules.yml names it: the path under module_utils/ or plugin_utils/, without .py."""
    names = []
    for base in SOURCE_DIRS:
        for path in sorted((ROOT / base).rglob("*.py")):
            if path.name != "__init__.py":
                names.append(path.relative_to(ROOT / base).with_suffix("").as_posix())
    return names


def import_name(name: str) -> str:
    base = next(b for b in SOURCE_DIRS if (ROOT / b / (name + ".py")).exists())
    return PREFIX + (base + "/" + name).replace("/", ".")


def test_every_module_has_an_entry_and_every_entry_a_module():
    on_disk = modules_on_disk()
    assert sorted(set(on_disk) - set(ENTRIES)) == []
    assert sorted(set(ENTRIES) - set(on_disk)) == []


@pytest.mark.parametrize("path", sorted(p for b in SOURCE_DIRS for p in (ROOT / b).rglob("__init__.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_package_init_files_hold_no_code(path):
    """The runner leaves __init__.py out: that is only right while they hold nothing but a docstring."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    assert [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))] == []


def imported(path: Path) -> Set[str]:
    """Collection modules this file imports (``from pkg import mod`` counts as pkg.mod when that is a module)."""
    return {n for n in imported_modules(path) if n.startswith(PREFIX) and source_of(n).exists()}


def source_of(name: str) -> Path:
    return ROOT / (name[len(PREFIX):].replace(".", "/") + ".py")


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_entry_names_existing_tests_that_load_its_module(name):
    """Each listed test exists, and the tests import the module, directly or through modules they import."""
    tests = ENTRIES[name]["tests"]
    assert tests, name
    files = []
    for test in tests:
        path = ROOT / test
        assert path.exists(), test
        files += sorted(path.rglob("test_*.py")) if path.is_dir() else [path]
    seen: Set[str] = set()
    todo = [n for path in files for n in imported(path)]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo += imported(source_of(current))
    assert import_name(name) in seen, "%s: %s never import %s" % (name, tests, import_name(name))


def test_minimum_scores_are_the_issue_bars():
    """Issue 22: the secrets policy at least 95%, every other module at least 85% (no entry may lower it)."""
    assert CONFIG["default_min_score"] == 85
    assert ENTRIES["secrets"]["min_score"] == 95
    assert [n for n, e in ENTRIES.items() if float(e.get("min_score", 85)) < 85] == []


def test_the_equivalents_list_reads_and_names_modules_on_disk():
    """A broken tests/mutation/equivalent.yml stops every run: each entry has its file, line, mutation and why."""
    entries = yaml.safe_load((ROOT / "tests" / "mutation" / "equivalent.yml").read_text(encoding="utf-8"))
    assert isinstance(entries, list) and entries
    for entry in entries:
        assert set(entry) - {"source"} == {"file", "line", "mutation", "why"}, entry
        assert (ROOT / entry["file"]).is_file(), entry["file"]
        assert isinstance(entry["line"], int) and isinstance(entry["mutation"], str) and str(entry["why"]).strip(), entry
