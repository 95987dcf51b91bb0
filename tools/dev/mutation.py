# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation testing of plugins/module_utils and plugins/plugin_utils: each module against its own tests.

Run it through ``make mutation`` (or tools/dev/mutation, which builds the tool's venv), not directly.

Why this shape:

* The mutants come from mutmut 2 (pinned in requirements-mutation.txt): it mutates module-level code too
  (patterns, word lists, cut-offs), which is most of the secrets policy; mutmut 3 only mutates functions.
* mutmut 2's own runner writes each mutant into the file and starts a fresh interpreter per mutant. In a
  working tree that several people share that would hand them mutated modules, and it costs about a second a
  mutant. Here the mutated source never touches the disk: a forked child serves it from memory under the
  module's import name (ansible_collections.gpufleet.sglang.plugins...) and runs pytest on the module's own
  tests (tests/mutation/modules.yml). A test that runs the module in another process (ansible-playbook) does
  not see the mutant, so such tests cannot kill it; own unit tests import it.
* Two operators of our own, for modules that name them in modules.yml (``operators``), because mutmut leaves
  triple-quoted strings and the inside of patterns alone: ``drop_element`` removes one element of a tuple, list
  or set literal (one pattern of a layered defence, one word of a list: each must be tested on its own), and
  ``regex_bounds`` moves each ``{N}``/``{N,}``/``{N,M}`` count inside a string literal by one either way (the
  cut-off of a pattern, tested at the boundary).
* A mutant is killed when its tests fail, error or time out; it survives when they pass. Mutants listed in
  tests/mutation/equivalent.yml (reviewed: they cannot change behaviour) are left out of the score, which is
  killed / (mutants - equivalent). Mutants that do not compile are not mutants and are not counted.

Exit status: 0 when every module reached its minimum score (modules.yml), 1 when one did not, 2 on bad use.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import importlib.abc
import importlib.util
import json
import os
import re
import select
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import yaml

import mutmut
import parso

ROOT = Path(__file__).resolve().parents[2]
MODULES_FILE = ROOT / "tests/mutation/modules.yml"
EQUIVALENT_FILE = ROOT / "tests/mutation/equivalent.yml"
REPORT_DIR = ROOT / "build/mutation"
SOURCE_DIRS = ("plugins/module_utils", "plugins/plugin_utils")
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--no-header", "-W", "ignore"]


@dataclass
class Mutant:
    """One mutation of a module: where it is, what the lines become, and what the tests made of it."""

    index: int
    line: int
    source: str  # the original line(s), stripped
    mutation: str  # the mutated line(s), stripped
    code: str = field(repr=False, default="")
    status: str = "untested"  # killed, timeout, survived, equivalent, invalid
    why: str = ""
    lines: List[int] = field(default_factory=list)  # every line of the original it changes (1-based)
    tests: Optional[List[str]] = None  # the nodeids it is run against; None: the whole list


@dataclass
class Module:
    """A module under test: its name (as MODULES takes it), file, import name, tests and minimum score."""

    name: str
    path: Path
    fqname: str
    tests: List[str]
    min_score: float
    operators: List[str] = field(default_factory=list)
    mutants: List[Mutant] = field(default_factory=list)


def collection_prefix() -> str:
    """ansible_collections.<namespace>.<name>, from galaxy.yml: the name the tests import modules by."""
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text(encoding="utf-8"))
    return "ansible_collections.%s.%s" % (galaxy["namespace"], galaxy["name"])


def module_name(path: Path) -> str:
    """The short name MODULES takes: the path under module_utils/ or plugin_utils/, without .py."""
    rel = path.relative_to(ROOT).as_posix()
    for base in SOURCE_DIRS:
        if rel.startswith(base + "/"):
            return rel[len(base) + 1:-3]
    raise ValueError(rel)


def modules_on_disk() -> List[Path]:
    """Every module of the two source folders (package __init__ files hold no code)."""
    found = []
    for base in SOURCE_DIRS:
        found += [p for p in sorted((ROOT / base).rglob("*.py")) if p.name != "__init__.py"]
    return found


def load_modules(wanted: List[str]) -> Tuple[List[Module], List[str]]:
    """The modules to test (all with tests named in modules.yml when ``wanted`` is empty) and any problems."""
    config = yaml.safe_load(MODULES_FILE.read_text(encoding="utf-8"))
    default_min = float(config.get("default_min_score", 85))
    entries: Dict[str, dict] = config.get("modules") or {}
    prefix = collection_prefix()
    by_name = {module_name(p): p for p in modules_on_disk()}
    problems = []
    for name in entries:
        if name not in by_name:
            problems.append("tests/mutation/modules.yml names %s, which is not a module under %s"
                            % (name, " or ".join(SOURCE_DIRS)))
    names = []
    for item in wanted:
        item = item.strip().rstrip("/")
        if item.endswith(".py"):  # a path was given
            item = module_name((ROOT / item).resolve())
        item = item.replace(".", "/")
        if item not in by_name:
            problems.append("MODULES names %s: no such module under %s (known: %s)"
                            % (item, " or ".join(SOURCE_DIRS), " ".join(sorted(by_name))))
        elif item not in entries:
            problems.append("MODULES names %s, but tests/mutation/modules.yml names no tests for it" % item)
        else:
            names.append(item)
    if not wanted:
        names = [n for n in sorted(by_name) if n in entries]
    modules = []
    for name in names:
        entry = entries[name] or {}
        path = by_name[name]
        rel = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        tests = list(entry.get("tests") or [])
        missing = [t for t in tests if not (ROOT / t).exists()]
        if not tests or missing:
            why = ("missing: " + " ".join(missing)) if missing else "not given"
            problems.append("tests/mutation/modules.yml: %s: tests %s" % (name, why))
            continue
        operators = list(entry.get("operators") or [])
        unknown = sorted(set(operators) - set(EXTRA_OPERATORS))
        if unknown:
            problems.append("tests/mutation/modules.yml: %s: unknown operators %s (known: %s)"
                            % (name, " ".join(unknown), " ".join(sorted(EXTRA_OPERATORS))))
            continue
        modules.append(Module(name, path, prefix + "." + rel, tests, float(entry.get("min_score", default_min)),
                              operators))
    return modules, problems


def _changes(old: List[str], new: List[str]) -> List[Tuple[str, int, int, int, int]]:
    """difflib's opcodes that are not "equal": the line ranges the mutant replaces, removes or inserts."""
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def changed_lines(original: str, mutated: str) -> Tuple[int, str, str]:
    """(first changed line number, original lines, mutated lines), each line stripped, joined by newlines."""
    old, new = original.splitlines(), mutated.splitlines()
    changes = _changes(old, new)
    if not changes:
        return (0, "", "")
    removed = [s.strip() for op in changes for s in old[op[1]:op[2]]]
    added = [s.strip() for op in changes for s in new[op[3]:op[4]]]
    return (changes[0][1] + 1, "\n".join(removed), "\n".join(added))


def changed_line_numbers(original: str, mutated: str) -> List[int]:
    """Every line of the original (1-based) that the mutant replaces or removes; for a pure insertion, the lines
    either side of it. Coverage is asked about all of them: a mutant that drops a line of a long literal changes
    that line only, but the statement it belongs to is what runs."""
    numbers: Set[int] = set()
    for _tag, begin, end, _new_begin, _new_end in _changes(original.splitlines(), mutated.splitlines()):
        numbers.update(range(begin + 1, end + 1) if end > begin else (begin, begin + 1))
    return sorted(n for n in numbers if n > 0)


def _header_end(node: ast.stmt) -> int:
    """The last line of a statement that runs as one step: all of a simple statement, the header of a compound
    one (``if``/``for``/``while``/``with``/``def``... up to its first inner statement)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return max(node.lineno, body[0].lineno - 1)
    return node.end_lineno or node.lineno


def statement_lines(tree: ast.Module, line: int) -> FrozenSet[int]:
    """The lines of the innermost statement (a compound statement's header only) holding ``line``; {line} when none.

    Why: Python reports a line as run only where bytecode starts on it. A mutant of the third line of a
    multi-line literal or call is in code that runs whenever its statement runs, so coverage is read for the
    whole statement, not for that line alone. Decorators count as part of their ``def``/``class`` header.
    """
    best: Optional[Tuple[int, int]] = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        decorators = getattr(node, "decorator_list", None) or []
        start = min([node.lineno] + [d.lineno for d in decorators])
        end = _header_end(node)
        if start <= line <= end and (best is None or end - start <= best[1] - best[0]):
            best = (start, end)
    if best is None:
        return frozenset([line])
    return frozenset(range(best[0], best[1] + 1))


def _offsets(source: str) -> List[int]:
    """Offset of the start of each line (1-based line numbers index it directly)."""
    starts = [0, 0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _drop_element(source: str) -> List[str]:
    """Each mutant that removes one element (and its comma) from a tuple, list or set literal of 2+ elements."""
    starts = _offsets(source)

    def at(pos: Tuple[int, int]) -> int:
        return starts[pos[0]] + pos[1]

    out: List[str] = []
    stack = [parso.parse(source)]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if not children:
            continue
        stack.extend(reversed(children))
        if node.type not in ("testlist_comp", "dictorsetmaker") or node.parent.type != "atom":
            continue
        if any(c.type in ("sync_comp_for", "comp_for") or (c.type == "operator" and c.value in (":", "**"))
               for c in children):
            continue  # a comprehension or a dict
        elements = [i for i, c in enumerate(children) if not (c.type == "operator" and c.value == ",")]
        if len(elements) < 2:
            continue
        for n, i in enumerate(elements):
            if n + 1 < len(elements):  # the element up to the next one
                begin, end = at(children[i].start_pos), at(children[elements[n + 1]].start_pos)
            else:  # the last element, from the end of the one before it
                begin, end = at(children[elements[n - 1]].end_pos), at(children[i].end_pos)
            out.append(source[:begin] + source[end:])
    return out


_BOUND = re.compile(r"\{(\d+)(,\d*)?\}")


def _regex_bounds(source: str) -> List[str]:
    """Each mutant that moves one {N}, {N,} or {N,M} count inside a string literal by one, up and down."""
    starts = _offsets(source)
    out: List[str] = []
    stack = [parso.parse(source)]
    while stack:
        node = stack.pop()
        if hasattr(node, "children"):
            stack.extend(reversed(node.children))
            continue
        if node.type != "string":
            continue
        base = starts[node.start_pos[0]] + node.start_pos[1]
        for match in _BOUND.finditer(node.value):
            number = int(match.group(1))
            for new in (number + 1, number - 1):
                if new >= 0:
                    begin, end = base + match.start(1), base + match.end(1)
                    out.append(source[:begin] + str(new) + source[end:])
    return out


EXTRA_OPERATORS = {"drop_element": _drop_element, "regex_bounds": _regex_bounds}


def enumerate_mutants(module: Module) -> None:
    """Fill module.mutants with every mutmut 2 mutation of the module's source, then our operators' ones."""
    source = module.path.read_text(encoding="utf-8")
    filename = str(module.path)
    ids = mutmut.list_mutations(mutmut.Context(source=source, filename=filename))
    codes = []
    for mutation_id in ids:
        codes.append(mutmut.mutate(mutmut.Context(source=source, mutation_id=mutation_id, filename=filename))[0])
    for operator in module.operators:
        codes += EXTRA_OPERATORS[operator](source)
    for number, code in enumerate(codes):
        line, old, new = changed_lines(source, code)
        mutant = Mutant(number, line, old, new, code, lines=changed_line_numbers(source, code))
        try:
            compile(code, filename, "exec")
        except SyntaxError:
            mutant.status = "invalid"
        module.mutants.append(mutant)


def rebuild_survivors(module: Module, wanted: List[dict]) -> List[dict]:
    """Fill module.mutants with the mutants of ``wanted`` (a record's survivors) as the source is now; returns those
    that no longer match it (the source changed at their line).

    Why not enumerate_mutants: mutmut parses the whole module once per mutant, which for the largest modules takes
    longer than testing their survivors. Only the mutations on the statements that hold a survivor's original text
    are built here (wherever that text is now: edits above it move it), and each is matched by its original and its
    mutated text, the nearest to its old line first.
    """
    source = module.path.read_text(encoding="utf-8")
    filename = str(module.path)
    tree = ast.parse(source)
    lines = [line.strip() for line in source.splitlines()]
    near: Set[int] = set()
    for item in wanted:
        first = item["source"].splitlines()[0] if item["source"] else None
        for number in ([n for n, text in enumerate(lines, 1) if text == first] if first else [item["line"]]):
            near |= statement_lines(tree, number)
    ids = mutmut.list_mutations(mutmut.Context(source=source, filename=filename))
    codes = [mutmut.mutate(mutmut.Context(source=source, mutation_id=mutation_id, filename=filename))[0]
             for mutation_id in ids if mutation_id.line_number + 1 in near]
    for operator in module.operators:
        codes += [code for code in EXTRA_OPERATORS[operator](source) if set(changed_line_numbers(source, code)) & near]
    built: Dict[Tuple[str, str], List[Tuple[int, str]]] = {}
    for code in codes:
        line, old, new = changed_lines(source, code)
        built.setdefault((old, new), []).append((line, code))
    gone = []
    for item in wanted:
        candidates = built.get((item["source"], item["mutation"]))
        if not candidates:
            gone.append(item)
            continue
        line, code = min(candidates, key=lambda found: abs(found[0] - item["line"]))
        candidates.remove((line, code))
        module.mutants.append(Mutant(len(module.mutants), line, item["source"], item["mutation"], code,
                                     lines=changed_line_numbers(source, code)))
    return gone


def retest_survivors(module: Module, equivalents: List[dict], jobs: int, select: bool) -> List[str]:
    """Run the survivors of the module's last record against its tests as they are now, and print what they do.

    Why: after a run, tests are written to kill what survived; this checks them on those mutants alone, in minutes,
    without the hours a whole run of the largest modules takes. The record is left as it is: its score is the
    score of the run that wrote it.
    """
    path = record_path(module)
    if not path.exists():
        return ["%s: no record in %s: run it first" % (module.name, path)]
    record = json.loads(path.read_text(encoding="utf-8"))
    wanted = [item for item in record["mutants"] if item["status"] == "survived"]
    gone = rebuild_survivors(module, wanted)
    mark_equivalents(module, equivalents)  # reviewed since the run; entries for mutants not rebuilt here are not stale
    rc, seconds, names, coverage = baseline(module, cover=select)
    if rc != 0:
        return ["%s: its tests fail without any mutant (pytest exit %d)" % (module.name, rc)]
    warm_up(names)
    if coverage is not None:
        choose_tests(module, coverage)
    run_mutants(module, timeout=max(10.0, 10 * seconds), jobs=jobs)
    counts = {status: sum(m.status == status for m in module.mutants) for status in ("killed", "timeout", "equivalent",
                                                                                     "survived")}
    print("%s: %d survivors of the run of %s: %d killed now (%d by timeout), %d equivalent, %d still survive, %d no"
          " longer in the source" % (module.name, len(wanted), record.get("fingerprint", "?")[:12],
                                     counts["killed"] + counts["timeout"], counts["timeout"], counts["equivalent"],
                                     counts["survived"], len(gone)), flush=True)
    print_survivors(module)
    for item in gone:
        print("  gone %s:%d: %s -> %s" % (module.path.relative_to(ROOT).as_posix(), item["line"], item["source"],
                                          item["mutation"]))
    return []


def load_equivalents() -> List[dict]:
    """The reviewed list of equivalent mutants (file, line, mutation, why)."""
    if not EQUIVALENT_FILE.exists():
        return []
    data = yaml.safe_load(EQUIVALENT_FILE.read_text(encoding="utf-8")) or []
    for entry in data:
        for key in ("file", "line", "mutation", "why"):
            if key not in entry or entry[key] is None or (key != "mutation" and entry[key] == ""):
                raise SystemExit("tests/mutation/equivalent.yml: an entry lacks %r: %r" % (key, entry))
    return data


def mark_equivalents(module: Module, equivalents: List[dict], eligible: Tuple[str, ...] = ("untested",)) -> List[str]:
    """Mark the listed equivalents of this module; returns warnings for entries that match no mutant.

    An entry matches a mutant of the same file whose mutated line(s) read exactly ``mutation`` (stripped);
    ``line`` picks among several such mutants and is reported when it has moved.
    """
    rel = module.path.relative_to(ROOT).as_posix()
    warnings = []
    for entry in (e for e in equivalents if e["file"] == rel):
        want = "\n".join(s.strip() for s in str(entry["mutation"]).strip().splitlines())
        source = "\n".join(s.strip() for s in str(entry.get("source", "")).strip().splitlines())
        candidates = [m for m in module.mutants if m.mutation == want and m.status in eligible
                      and (not source or m.source == source)]
        if not candidates:
            warnings.append("equivalent.yml: %s:%s no mutant reads %r (stale entry: remove or update it)"
                            % (rel, entry["line"], want))
            continue
        best = min(candidates, key=lambda m: abs(m.line - int(entry["line"])))
        best.status, best.why = "equivalent", str(entry["why"]).strip()
        if best.line != int(entry["line"]):
            warnings.append("equivalent.yml: %s:%s has moved to line %d" % (rel, entry["line"], best.line))
    return warnings


class _ServeMutant(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module's mutated source under its import name, so nothing is written to disk."""

    def __init__(self, fqname: str, filename: str, code: str):
        self.fqname, self.filename, self.code = fqname, filename, code

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102 (importlib protocol)
        if fullname != self.fqname:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, origin=self.filename)
        spec.has_location = True
        return spec

    def create_module(self, spec):  # noqa: D102 (importlib protocol)
        return None

    def exec_module(self, module):  # noqa: D102 (importlib protocol)
        module.__file__ = self.filename
        exec(compile(self.code, self.filename, "exec"), module.__dict__)  # noqa: S102 (that is the point)


OUTSIDE_TESTS = ""  # the coverage key of lines run outside any test: imports, collection, wider fixtures


class _Coverage:
    """Which lines of one source file each test runs (sys.monitoring, Python 3.12+), for the baseline run.

    Each line is reported once per test: the callback disables its location and every switch of test restarts
    the events. Lines run outside any test (importing the module, collecting the tests, setting up a class-,
    module- or session-scoped fixture whose value later tests share) go under OUTSIDE_TESTS: a mutant there
    runs every test. Before each test the module's functools caches are emptied, so a test that would have
    been served a cached answer runs (and is credited with) the lines behind it.
    """

    def __init__(self, filename: str, fqname: str):
        self.filename, self.fqname = os.path.realpath(filename), fqname
        self.lines: Dict[str, Set[int]] = {}
        self.order: List[str] = []
        self.current = OUTSIDE_TESTS
        self._ours: Dict[str, bool] = {}
        self._fixtures: List[str] = []
        monitoring = sys.monitoring
        self.tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
        monitoring.use_tool_id(self.tool, "mutation coverage")
        monitoring.register_callback(self.tool, monitoring.events.LINE, self._line)
        monitoring.set_events(self.tool, monitoring.events.LINE)

    def _line(self, code, line: int):
        ours = self._ours.get(code.co_filename)
        if ours is None:
            ours = self._ours[code.co_filename] = os.path.realpath(code.co_filename) == self.filename
        if ours:
            self.lines.setdefault(self.current, set()).add(line)
        return sys.monitoring.DISABLE

    def _switch(self, key: str) -> None:
        self.current = key
        sys.monitoring.restart_events()

    def _clear_caches(self) -> None:
        module = sys.modules.get(self.fqname)
        for value in list(vars(module).values()) if module is not None else []:
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == self.fqname:
                value.cache_clear()

    def hooks(self):
        """The pytest plugin object (built here, where pytest is imported: the parent need not import it)."""
        import pytest

        coverage = self

        class Plugin:
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_protocol(self, item, nextitem):  # noqa: D102 (pytest hook)
                coverage._clear_caches()
                coverage._switch(item.nodeid)
                yield
                coverage._switch(OUTSIDE_TESTS)

            @pytest.hookimpl(hookwrapper=True)
            def pytest_fixture_setup(self, fixturedef, request):  # noqa: D102 (pytest hook)
                wider = fixturedef.scope != "function"
                if wider:
                    coverage._fixtures.append(coverage.current)
                    coverage._switch(OUTSIDE_TESTS)
                yield
                if wider:
                    coverage._switch(coverage._fixtures.pop())

            def pytest_collection_finish(self, session):  # noqa: D102 (pytest hook)
                coverage.order = [item.nodeid for item in session.items]

        return Plugin()

    def stop(self) -> dict:
        """What the parent needs: the tests in collected order, and the lines each ran."""
        sys.monitoring.set_events(self.tool, 0)
        sys.monitoring.free_tool_id(self.tool)
        return {"order": self.order, "lines": {k: sorted(v) for k, v in self.lines.items()}}


def _selector(nodeids: List[str]):
    """A pytest plugin that keeps only the tests named (by nodeid, as the baseline collected them), in order.

    When one of them is not collected (an id that the mutant changed), it keeps every test: running too many
    tests costs time, running too few would call a mutant survived that the whole list kills.
    """
    import pytest

    wanted = set(nodeids)

    class Select:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):  # noqa: D102 (pytest hook)
            keep = [item for item in items if item.nodeid in wanted]
            if {item.nodeid for item in keep} != wanted:
                return
            dropped = [item for item in items if item.nodeid not in wanted]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    return Select()


def _child(module: Module, code: Optional[str], report_fd: Optional[int], tests: Optional[List[str]] = None,
           cover: bool = False) -> None:
    """In a forked child: serve the mutant (if any), run the module's tests quietly, exit with pytest's code.

    ``tests``: the nodeids to run (None: all). ``cover`` (baseline only): also report the lines each test runs.
    """
    try:
        import pytest

        if code is not None:
            sys.meta_path.insert(0, _ServeMutant(module.fqname, str(module.path), code))
        sys.dont_write_bytecode = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        plugins = []
        coverage = None
        if cover and module.fqname not in sys.modules:  # loaded already: its import-time lines would be missed
            coverage = _Coverage(str(module.path), module.fqname)
            plugins.append(coverage.hooks())
        if tests is not None:
            plugins.append(_selector(tests))
        rc = int(pytest.main(PYTEST_ARGS + module.tests, plugins=plugins))
        if report_fd is not None:
            third_party = sorted(n for n, m in list(sys.modules.items())
                                 if not n.startswith("ansible_collections") and _outside_tree(m))
            report = {"modules": third_party, "coverage": coverage.stop() if coverage else None}
            data = json.dumps(report).encode()
            while data:
                data = data[os.write(report_fd, data):]
            os.close(report_fd)
        os._exit(rc)
    except BaseException:  # noqa: B036 (anything escaping here must not run the parent's code)
        os._exit(99)


def _outside_tree(module) -> bool:
    """Modules not loaded from this checkout (the standard library, pytest, ansible-core...)."""
    filename = getattr(module, "__file__", None) or ""
    return not filename.startswith(str(ROOT) + os.sep) or "/site-packages/" in filename


def warm_up(names: List[str]) -> None:
    """Import in the parent what the tests import from outside the checkout, so each fork starts warm."""
    for name in names:
        if name in sys.modules or name == "__main__":
            continue
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: B036 (a module that will not import here is simply not warmed)
            pass


def baseline(module: Module, cover: bool = False) -> Tuple[int, float, List[str], Optional[dict]]:
    """Run the unmutated tests once: (pytest's code, seconds, modules imported from outside the checkout, and
    with ``cover`` the tests in order and the lines of the module each runs, or None)."""
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(module, None, write_fd, cover=cover)
    os.close(write_fd)
    chunks = []
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    status = os.waitpid(pid, 0)[1]
    seconds = time.monotonic() - start
    report = json.loads(b"".join(chunks).decode() or "{}")
    return os.waitstatus_to_exitcode(status), seconds, report.get("modules", []), report.get("coverage")


def choose_tests(module: Module, coverage: dict) -> None:
    """Give each untested mutant the tests that run a line it changes (mutant.tests), in collected order.

    A mutant touching a line run outside any test (import time: module-level code, ``def`` and ``class``
    lines, defaults, decorators; or a wider fixture) keeps the whole list. One whose lines no test runs
    cannot be told from the original by these tests: it survives without a run, and says so.
    """
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    outside = set(coverage["lines"].get(OUTSIDE_TESTS, ()))
    runs = {test: set(coverage["lines"].get(test, ())) for test in coverage["order"]}
    for mutant in (m for m in module.mutants if m.status == "untested"):
        lines: Set[int] = set()
        for number in mutant.lines:
            lines |= statement_lines(tree, number)
        if not lines or lines & outside:
            continue
        mutant.tests = [test for test in coverage["order"] if runs[test] & lines]
        if not mutant.tests:
            mutant.status = "survived"
            mutant.why = "no test runs line(s) %s" % ", ".join(str(n) for n in sorted(lines))


def run_mutants(module: Module, timeout: float, jobs: int, done: Optional[Callable[[Mutant], None]] = None) -> None:
    """Test every untested mutant, ``jobs`` forks at a time; a run past ``timeout`` seconds is killed. ``done`` is
    told of each mutant as its result comes in (the progress file that lets a stopped run go on)."""
    pending = [m for m in module.mutants if m.status == "untested"]
    running: Dict[int, Tuple[Mutant, float]] = {}
    tested, total = 0, len(pending)
    while pending or running:
        while pending and len(running) < jobs:
            mutant = pending.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(module, mutant.code, None, tests=mutant.tests)
            running[pid] = (mutant, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for other, (mutant, started) in list(running.items()):
                if now - started > timeout:
                    os.kill(other, 9)
                    os.waitpid(other, 0)
                    mutant.status = "timeout"
                    del running[other]
                    if done:
                        done(mutant)
            select.select([], [], [], 0.005)
            continue
        if pid not in running:
            continue
        mutant = running.pop(pid)[0]
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            mutant.status = "survived"
        elif code in (4, 5, 99):
            raise SystemExit("mutation: %s: pytest could not run its tests (exit %d) on mutant %d at line %d"
                             % (module.name, code, code, mutant.line))
        else:
            mutant.status = "killed"  # tests failed (1), collection broke (2), or the process crashed
        if done:
            done(mutant)
        tested += 1
        if tested % 100 == 0:
            print("mutation: %s: %d of %d mutants tested" % (module.name, tested, total), flush=True)


def fingerprint(module: Module) -> str:
    """sha256 of the module's source and of every test file it is run against: a stored run is current while it holds."""
    digest = hashlib.sha256(module.path.read_bytes())
    for test in module.tests:
        path = ROOT / test
        for item in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(item.relative_to(ROOT).as_posix().encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()


def progress_path(module: Module) -> Path:
    """Where a run in progress notes each mutant's result, so that a run stopped before its end can go on."""
    return REPORT_DIR / ("%s.progress.jsonl" % module.name.replace("/", "."))


def resume(module: Module, tested: str) -> Callable[[Mutant], None]:
    """Take the results a stopped run of the same source and tests noted (mutants are numbered alike then), start the
    progress file afresh otherwise, and return what notes each new result. Why: some modules take hours, more than
    a session may have; the record is still written only when every mutant has a result."""
    path = progress_path(module)
    header = {"fingerprint": tested, "mutants": len(module.mutants)}
    taken = 0
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        if lines and json.loads(lines[0]) == header:
            by_number = {m.index: m for m in module.mutants}
            for line in lines[1:]:
                try:
                    item = json.loads(line)
                except ValueError:
                    break  # a line cut when the run was stopped
                mutant = by_number.get(item["number"])
                if mutant is not None and mutant.status == "untested":
                    mutant.status = item["status"]
                    taken += 1
    if taken:
        print("mutation: %s: %d mutants' results taken from the stopped run in %s" % (module.name, taken, path),
              flush=True)
    else:
        REPORT_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    handle = path.open("a", encoding="utf-8")

    def note(mutant: Mutant) -> None:
        handle.write(json.dumps({"number": mutant.index, "status": mutant.status}) + "\n")
        handle.flush()
    return note


def record_path(module: Module) -> Path:
    """Where the last run of a module is kept."""
    return REPORT_DIR / ("%s.json" % module.name.replace("/", "."))


def load_record(module: Module) -> Optional[str]:
    """Fill module.mutants from its last run; returns why that run cannot be used, or None when it is current."""
    path = record_path(module)
    if not path.exists():
        return "never run"
    data = json.loads(path.read_text(encoding="utf-8"))
    if "fingerprint" in data:
        current = data["fingerprint"] == fingerprint(module)
    else:  # a record from before fingerprints: current when written after the module and its tests last changed
        files = [module.path] + [f for t in module.tests
                                 for f in (sorted((ROOT / t).rglob("*.py")) if (ROOT / t).is_dir() else [ROOT / t])]
        current = path.stat().st_mtime > max(f.stat().st_mtime for f in files)
    if not current:
        return "its source or tests changed since the last run"
    for number, item in enumerate(data["mutants"]):
        status = "survived" if item["status"] == "equivalent" else item["status"]  # re-read from the list below
        why = item.get("why", "") if status == "survived" else ""  # why it survived without a run, if it did
        module.mutants.append(Mutant(number, item["line"], item["source"], item["mutation"], status=status, why=why))
    return None


def score(module: Module) -> Dict[str, float]:
    """Counts and the score (killed, timeouts included, over mutants less equivalents)."""
    counted = [m for m in module.mutants if m.status != "invalid"]
    killed = sum(m.status in ("killed", "timeout") for m in counted)
    equivalent = sum(m.status == "equivalent" for m in counted)
    survived = sum(m.status == "survived" for m in counted)
    total = len(counted)
    base = total - equivalent
    return {"mutants": total, "killed": killed, "timeouts": sum(m.status == "timeout" for m in counted),
            "equivalent": equivalent, "survived": survived,
            "score": round(100.0 * killed / base, 1) if base else 100.0}


def print_survivors(module: Module) -> None:
    """Each survivor as file:line with its original and mutated line(s)."""
    rel = module.path.relative_to(ROOT).as_posix()
    for mutant in (m for m in module.mutants if m.status == "survived"):
        print("  survived %s:%d%s" % (rel, mutant.line, " (not run: %s)" % mutant.why if mutant.why else ""))
        for line in mutant.source.splitlines() or [""]:
            print("    - " + line)
        for line in mutant.mutation.splitlines() or ["(nothing: the line(s) above are removed)"]:
            print("    + " + line)


def main(argv: List[str]) -> int:
    """Parse MODULES and options, test each module, print the survivors and a table of scores."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("modules", nargs="*", help="module names (secrets, model_cache/verify, server_launch...);"
                        " none: every module tests/mutation/modules.yml names tests for")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("MUTATION_JOBS", "1")),
                        help="mutants tested at once (default 1, or MUTATION_JOBS)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests, run nothing")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: the table of the last runs (build/mutation/), with the equivalents list as it"
                             " is now; a module whose source or tests changed since its run must be run again")
    parser.add_argument("--survivors", action="store_true",
                        help="test only the mutants the module's last run left surviving, against its tests as they are"
                             " now (to check new tests on them); the record and its score are left as they are")
    parser.add_argument("--tests", action="append", metavar="TEST",
                        help="with --survivors only, once per test file: run them against these files instead of the"
                             " module's list (the survivors passed the whole list as it was; the tests written since are"
                             " what can kill them). One file each, so that a module named after it is not taken for one")
    parser.add_argument("--no-select", dest="select", action="store_false",
                        help="run every mutant against the module's whole test list, not only the tests that run the"
                             " lines it changes (to compare, or when coverage misleads)")
    args = parser.parse_args(argv)
    modules, problems = load_modules([m for a in args.modules for m in a.split()])
    for problem in problems:
        print("mutation: " + problem, file=sys.stderr)
    if problems and args.modules:
        return 2
    if args.list:
        for module in modules:
            print("%-28s %s" % (module.name, " ".join(module.tests)))
        return 0
    equivalents = load_equivalents()
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    rows, failed, warnings = [], [], []
    if args.tests and not args.survivors:
        parser.error("--tests goes with --survivors only: a score is that of the module's whole list")
    if args.survivors:
        for module in modules:
            module.tests = args.tests or module.tests
            warnings += retest_survivors(module, equivalents, max(1, args.jobs), args.select)
        for warning in warnings:
            print("mutation: " + warning, file=sys.stderr)
        return 0
    if args.report:
        for module in modules:
            stale = load_record(module)
            if stale:
                print("mutation: %s: %s: run it again (make mutation MODULES=%s)" % (module.name, stale, module.name),
                      file=sys.stderr)
                failed.append(module.name)
                continue
            warnings += mark_equivalents(module, equivalents, eligible=("survived",))
            figures = score(module)
            print_survivors(module)
            if figures["score"] < module.min_score:
                failed.append(module.name)
            rows.append((module, figures))
        return finish(rows, failed, warnings)
    for module in modules:
        tested = fingerprint(module)  # before the run: an edit during it makes the record stale
        enumerate_mutants(module)
        warnings += mark_equivalents(module, equivalents)
        rc, seconds, names, coverage = baseline(module, cover=args.select)
        if rc != 0:
            print("mutation: %s: its tests fail without any mutant (pytest exit %d): fix them first: %s"
                  % (module.name, rc, " ".join(module.tests)), file=sys.stderr)
            failed.append(module.name)
            continue
        warm_up(names)
        started = time.monotonic()
        if coverage is not None:
            choose_tests(module, coverage)
        run_mutants(module, timeout=max(10.0, 10 * seconds), jobs=max(1, args.jobs), done=resume(module, tested))
        figures = score(module)
        figures["seconds"] = round(time.monotonic() - started, 1)  # of this run only, when it went on from a stopped one
        figures["selection"] = "coverage" if coverage is not None else "all tests"
        print("%s: %d mutants, %d killed (%d by timeout), %d equivalent, %d survived: %.1f%% (minimum %g%%) in %.0f s"
              " (tests: %s)"
              % (module.name, figures["mutants"], figures["killed"], figures["timeouts"], figures["equivalent"],
                 figures["survived"], figures["score"], module.min_score, figures["seconds"], figures["selection"]),
              flush=True)
        print_survivors(module)
        sys.stdout.flush()
        if figures["score"] < module.min_score:
            failed.append(module.name)
        rows.append((module, figures))
        record_path(module).write_text(json.dumps({
            "module": module.name, "file": module.path.relative_to(ROOT).as_posix(), "tests": module.tests,
            "fingerprint": tested, "min_score": module.min_score, **figures,
            "mutants": [{"line": m.line, "source": m.source, "mutation": m.mutation, "status": m.status,
                         **({"why": m.why} if m.why else {}),
                         **({"tests": len(m.tests)} if m.tests is not None else {})} for m in module.mutants],
        }, indent=1) + "\n", encoding="utf-8")
        progress_path(module).unlink(missing_ok=True)
    return finish(rows, failed, warnings)


def finish(rows: List[Tuple[Module, Dict[str, float]]], failed: List[str], warnings: List[str]) -> int:
    """Print the warnings and the table; the exit status (1 when a module is below its minimum or was not run)."""
    for warning in warnings:
        print("mutation: " + warning, file=sys.stderr)
    print()
    print("| module | mutants | killed | equivalent | survived | score | minimum |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for module, f in rows:
        cells = (module.name, f["mutants"], f["killed"], f["equivalent"], f["survived"], f["score"], module.min_score)
        print("| %s | %d | %d | %d | %d | %.1f%% | %g%% |" % cells)
    if failed:
        print("mutation: below the minimum or not run: " + " ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
