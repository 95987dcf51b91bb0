# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the startup scanner's rules read SGLang's own refusals: every ``raise X("...")`` and ``assert ..., "..."`` of an
installed SGLang's ``srt/`` package, rendered as the exception line it would print (formatted values shown as 7), and
classified alone, as a lone line of a paste.

Why: most misses of the held-out splits were failures worded in a way no earlier log had; SGLang's own messages are
where those words come from. Prints, per folder of ``srt/`` (or for the folders named), how many messages each cause
takes and the ones read as unknown (``--unknown``).

    .venv/bin/python tools/dev/sglang_refusals.py [--srt PATH] [--unknown] [FOLDER ...]
    (FOLDER: a prefix under srt/, e.g. arg_groups server_args.py; PATH defaults to the real SGLang CPU venv of
    `make sglang-cpu-venv`)
"""

from __future__ import annotations

import argparse
import ast
import collections
import glob
import os
import re
import sys
import warnings
from typing import Iterator, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))


def rendered(node: ast.AST) -> Optional[str]:
    """The text of a message expression, its formatted values shown as 7; None when it is not a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(part.value) if isinstance(part, ast.Constant) else "7" for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = rendered(node.left), rendered(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = rendered(node.left)
        return re.sub(r"%[sdrf]", "7", left) if left is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        text = rendered(node.func.value)
        return re.sub(r"\{[^}]*\}", "7", text) if text is not None else None
    return None


def refusals(srt: str) -> Iterator[Tuple[str, int, str]]:
    """(path under srt/, line, the exception line) of every raise and assert with a message."""
    for path in sorted(glob.glob(os.path.join(srt, "**", "*.py"), recursive=True)):
        try:
            with open(path, encoding="utf-8") as handle, warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)  # SGLang's own invalid escapes are not ours to report
                tree = ast.parse(handle.read())
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            name, message = None, None
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                func = node.exc.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "Error")
                message = rendered(node.exc.args[0])
            elif isinstance(node, ast.Assert) and node.msg is not None:
                name, message = "AssertionError", rendered(node.msg)
            if message and message.strip():
                yield os.path.relpath(path, srt), node.lineno, "%s: %s" % (name, message.strip().splitlines()[0])


def default_srt() -> str:
    found = glob.glob(os.path.join(ROOT, "build", "sglang-cpu", "*", "lib", "python3*", "site-packages", "sglang", "srt"))
    return sorted(found)[-1] if found else ""


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--srt", default=default_srt(), help="an installed SGLang's srt/ folder")
    parser.add_argument("--unknown", action="store_true", help="list the messages read as unknown")
    parser.add_argument("folders", nargs="*", help="prefixes under srt/ to count (all when none)")
    args = parser.parse_args(argv)
    if not args.srt or not os.path.isdir(args.srt):
        parser.error("no SGLang srt/ folder: build it with `make sglang-cpu-venv` or pass --srt")
    from ansible_collections.gpufleet.sglang.plugins.module_utils.startup.causes import classify  # noqa: E402

    counts: "collections.Counter[str]" = collections.Counter()
    unknown = []
    for path, line, text in refusals(args.srt):
        if args.folders and not any(path.startswith(folder) for folder in args.folders):
            continue
        cause = classify(text)
        counts[cause] += 1
        if cause == "unknown":
            unknown.append("%s:%d: %s" % (path, line, text[:200]))
    total = sum(counts.values())
    print("%d messages, %d read as unknown (%.1f%%)" % (total, counts["unknown"], 100.0 * counts["unknown"] / max(total, 1)))
    for cause, number in counts.most_common():
        print("  %-32s %d" % (cause, number))
    if args.unknown:
        print("\n".join(unknown))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
