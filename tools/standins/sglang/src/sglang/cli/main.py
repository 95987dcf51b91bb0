"""The ``sglang`` console script (``sglang = sglang.cli.main:main``), stand-in edition.

Subcommands: ``serve`` (the LLM server) and ``version``. Anything else prints the
usage and exits 2, as argparse would.
"""

import sys
from typing import List, Optional

from sglang._standin.settings import release

USAGE = "usage: sglang [-h] {serve,version} ...\n"


def main(argv: Optional[List[str]] = None) -> None:
    """Dispatch ``sglang <subcommand> ...``."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + f"\nSGLang STAND-IN {release()}: a test and rehearsal backend, not an inference server.\n")
        sys.exit(0 if args else 2)
    command, rest = args[0], args[1:]
    if command == "serve":
        from sglang.cli.serve import serve  # pylint: disable=import-outside-toplevel
        serve(rest)
    elif command == "version":
        print(release())
    else:
        sys.stderr.write(USAGE + f"sglang: error: argument subcommand: invalid choice: '{command}' (choose from 'serve', 'version')\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
