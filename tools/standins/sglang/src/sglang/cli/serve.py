"""``sglang serve``: SGLang's wrapper around the LLM server's parser.

It takes ``--model-type`` (exact spelling; 0.5.10+) and a leading positional model
path (0.5.18+) off argv before argparse sees it, as ``cli/serve.py`` does; the rest
goes to ``prepare_server_args``. The stand-in serves LLMs only: ``diffusion`` is
refused with the message SGLang prints when its diffusion extra is missing.
"""

import sys
from typing import List, Tuple

from sglang._standin import flagtable, settings

GENERAL_HELP = (
    "Usage: sglang serve <model-name-or-path> [additional-arguments]\n"
    "   or: sglang serve --model-path <model-name-or-path> [additional-arguments]\n\n"
    "The serving backend is detected from the model by default. Installed out-of-tree projects can add more backends.\n"
    "Optional override: --model-type {auto,llm,diffusion} (default: auto, fallback to LLM when no backend matches).\n"
    "Use `sglang serve --model-type BACKEND --help` for backend-specific help.\n\n"
    "(This `sglang` is the SGLang STAND-IN {release}: a test and rehearsal backend, not an inference server.)")


def extract_model_type(argv: List[str]) -> Tuple[str, List[str]]:
    """Take ``--model-type X`` / ``--model-type=X`` off argv (only that exact spelling, as SGLang)."""
    backend, rest, i = "auto", [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--model-type":
            if i + 1 >= len(argv):
                raise ValueError("Error: --model-type requires a value.")
            backend = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--model-type="):
            backend = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    if not backend:
        raise ValueError("Error: --model-type requires a non-empty value.")
    return backend, rest


def normalize_positional_model(argv: List[str]) -> List[str]:
    """``sglang serve <model> ...`` becomes ``--model-path <model> ...``."""
    if argv and not argv[0].startswith("-"):
        return ["--model-path", argv[0], *argv[1:]]
    return argv


def serve(argv: List[str]) -> None:
    """Parse and run, as ``sglang serve`` does for an LLM."""
    release = settings.release()
    wrapper = flagtable.serve_only(release)
    backend = "auto"
    if "serve_wrapper" in wrapper:
        backend, argv = extract_model_type(argv)
        choices = wrapper["serve_wrapper"].get("choices") or []
        if backend != "auto" and backend not in choices:
            raise ValueError(f"Unknown serve backend {backend!r}. Available: {', '.join(choices)}")
    if "serve_positional" in wrapper:
        argv = normalize_positional_model(argv)
    if any(h in argv for h in ("-h", "--help")) and backend == "auto" and "serve_wrapper" in wrapper:
        print(GENERAL_HELP.replace("{release}", release))
        print("\n--- Help for Standard Language Model Server ---")
    if backend == "diffusion":
        print('Diffusion model support is not available. Install with: pip install "sglang[diffusion]"')
        sys.exit(1)
    from sglang.launch_server import run_server  # pylint: disable=import-outside-toplevel
    from sglang.srt.server_args import prepare_server_args  # pylint: disable=import-outside-toplevel
    server_args = prepare_server_args(list(argv))
    run_server(server_args)
