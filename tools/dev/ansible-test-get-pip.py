"""Stand-in for the get-pip.py that ansible-test downloads to bootstrap pip into its per-test venvs.

ansible-test runs this file as a script with pip-install style arguments (packages and options) plus the
get-pip-only flags --no-setuptools and --no-wheel. Here pip comes from the standard library's ensurepip
instead of a download, then `pip install` runs with the remaining arguments.
"""
import os
import subprocess
import sys


def main() -> None:
    """Bootstrap pip offline, then install what ansible-test asked for."""
    subprocess.run([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"], check=True, stdout=subprocess.DEVNULL)
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    env = dict(os.environ)
    # ensurepip points PIP_CONFIG_FILE at the null device; a child pip would then lose the machine's pip
    # configuration (its CA bundle among others).
    if env.get("PIP_CONFIG_FILE") == os.devnull:
        del env["PIP_CONFIG_FILE"]
    subprocess.run([sys.executable, "-m", "pip", "install", *args], check=True, env=env)


if __name__ == "__main__":
    main()
