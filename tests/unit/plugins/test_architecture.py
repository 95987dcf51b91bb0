# -*- coding: utf-8 -*-
"""The rules of docs/architecture.md, checked on the code: who may import what, and the page names every file."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, Set

import pytest

ROOT = Path(__file__).resolve().parents[3]
PLUGINS = ROOT / "plugins"
PREFIX = "ansible_collections.gpufleet.sglang.plugins."
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def python_files(folder: str):
    return sorted(p for p in (PLUGINS / folder).rglob("*.py") if p.name != "__init__.py")


def imported_modules(path: Path) -> Set[str]:
    """Absolute names this file imports (``from x import y`` counts as x and x.y, since y may be a module)."""
    names: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update("%s.%s" % (node.module, alias.name) for alias in node.names)
    return names


def module_name(path: Path) -> str:
    return PREFIX + ".".join(path.relative_to(PLUGINS).with_suffix("").parts)


# Runs inside the SGLang service venv (model_cache_hub writes its source there), where huggingface_hub is.
RUNS_IN_THE_SERVICE_VENV = {"hub_helper.py": ("huggingface_hub",)}


@pytest.mark.parametrize("path", python_files("module_utils"), ids=lambda p: str(p.relative_to(PLUGINS)))
def test_module_utils_use_only_the_standard_library_and_module_utils(path):
    allowed_collection = PREFIX + "module_utils"
    for name in imported_modules(path):
        if name.split(".")[0] in RUNS_IN_THE_SERVICE_VENV.get(path.name, ()):
            continue
        top = name.split(".")[0]
        if name.startswith("ansible_collections."):
            assert name.startswith(allowed_collection), "%s imports %s: target-side code cannot reach it" % (path.name, name)
        elif top == "ansible":
            assert name.startswith("ansible.module_utils"), "%s imports %s, which is controller-only" % (path.name, name)
        elif top != "__future__":
            assert top in sys.stdlib_module_names, "%s imports %s, which a target's Python may not have" % (path.name, name)


@pytest.mark.parametrize("folder", ["module_utils", "plugin_utils"])
def test_docs_architecture_names_every_file(folder):
    for path in python_files(folder):
        rel = str(path.relative_to(PLUGINS))
        package = str(path.parent.relative_to(PLUGINS)) + "/"
        named = rel in ARCHITECTURE or (package in ARCHITECTURE and re.search(r"\b%s\b" % re.escape(path.stem), ARCHITECTURE))
        assert named, "docs/architecture.md does not name %s" % rel


def test_the_plugins_import_graph_has_no_cycle():
    graph: Dict[str, Set[str]] = {}
    files = {module_name(p): p for p in PLUGINS.rglob("*.py") if p.name != "__init__.py"}
    for name, path in files.items():
        graph[name] = {target for target in imported_modules(path) if target in files and target != name}
    state: Dict[str, int] = {}

    def visit(node: str, trail: list) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            assert state.get(nxt) != 1, "import cycle: %s" % " -> ".join(trail + [node, nxt])
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_filters_and_modules_stay_thin():
    """Logic lives in module_utils / plugin_utils: a filter file has no class but FilterModule and few lines."""
    for path in python_files("filter"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
        assert classes == ["FilterModule"], "%s defines %s" % (path.name, classes)
