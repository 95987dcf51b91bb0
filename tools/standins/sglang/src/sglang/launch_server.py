"""``python -m sglang.launch_server`` of the stand-in, and ``run_server`` for ``sglang serve``.

As in SGLang, both entry points parse with the same ``prepare_server_args`` and end
in ``run_server``; this one also prints the deprecation-style UserWarning on the
releases that have it (0.5.10+).
"""

import sys
import warnings

from sglang._standin import releases, settings


def run_server(server_args) -> None:
    """Launch the stand-in server for parsed args (blocks until it stops)."""
    from sglang._standin.server import run_server as _run  # pylint: disable=import-outside-toplevel
    _run(server_args)


def main(argv=None) -> None:
    """What ``python -m sglang.launch_server`` runs."""
    if releases.warns_on_launch_server(settings.release()):
        warnings.warn(
            "'python -m sglang.launch_server' is still supported, but "
            "'sglang serve' is the recommended entrypoint.\n"
            "  Example: sglang serve --model-path <model> [options]",
            UserWarning, stacklevel=1)
    from sglang.srt.server_args import prepare_server_args  # pylint: disable=import-outside-toplevel
    run_server(prepare_server_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
