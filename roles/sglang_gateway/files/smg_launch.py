#!/usr/bin/env python
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start the smg gateway with its API key read from the unit's systemd credential.

Why: smg takes its key only as ``--api-key``; on the unit's ExecStart line it would be readable in the unit
file and in /proc/<pid>/cmdline. Here it is added to smg's own argv inside the process (smg then renames its
process title to ``smg::router``), and the key file is root's alone, handed over by systemd (LoadCredential).
"""

import os
import sys

from smg.cli import main

credentials = os.environ.get("CREDENTIALS_DIRECTORY", "")
key_path = os.path.join(credentials, "api-key") if credentials else ""
if key_path and os.path.isfile(key_path):
    with open(key_path, encoding="utf-8") as handle:
        key = handle.read().strip()
    if key:
        sys.argv += ["--api-key", key]
sys.argv[0] = "smg"
main()
