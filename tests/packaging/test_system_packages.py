# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/dev/system-packages on a machine that lacks packages, without touching this machine's packages.

dpkg-query, apt-config and apt-get are stand-ins on PATH: dpkg-query reports the packages named in FAKE_MISSING
as absent and every other one as installed, apt-config points at a package-lists folder of the test's, and apt-get
only records how it was called. What the script decides (which packages, whether apt-get update runs, what a
non-root user is told) is real.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "dev" / "system-packages"
ALL = ("python3 python3-venv ca-certificates git shellcheck systemd-container debootstrap debian-archive-keyring "
       "nftables iproute2 openssh-client gpg dpkg-dev").split()

DPKG_QUERY = """#!/bin/sh
for pkg; do :; done
case " $FAKE_MISSING " in *" $pkg "*) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1;; esac
printf 'ii '
"""


@pytest.fixture(name="fake_apt")
def fake_apt_tools():
    """A PATH with the three stand-ins first, and the files they use.

    In a folder of its own under the system's temporary folder, with a copy of the script: pytest's folder (and
    perhaps the checkout's) is closed to other users, and the non-root test runs the script as another user.
    """
    tmp_path = Path(tempfile.mkdtemp(prefix="system-packages-"))
    tmp_path.chmod(0o755)
    bin_dir, lists, log = tmp_path / "bin", tmp_path / "lists", tmp_path / "apt-get.log"
    bin_dir.mkdir()
    lists.mkdir()
    (bin_dir / "dpkg-query").write_text(DPKG_QUERY)
    (bin_dir / "apt-config").write_text(f"#!/bin/sh\necho \"dir='{lists}/'\"\n")
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    script = shutil.copy2(SCRIPT, tmp_path / "system-packages")
    yield {"path": f"{bin_dir}:{os.environ['PATH']}", "lists": lists, "log": log, "script": script}
    shutil.rmtree(tmp_path)


def run(fake_apt, missing, *args, user=None):
    env = {"PATH": fake_apt["path"], "FAKE_MISSING": " ".join(missing), "HOME": "/"}
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    result = subprocess.run([*prefix, str(fake_apt["script"]), *args], env=env, capture_output=True, text=True, check=False, timeout=30)
    calls = fake_apt["log"].read_text().splitlines() if fake_apt["log"].exists() else []
    return result, calls


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="runs the script as root and as another user")


@root_only
def test_nothing_missing_installs_nothing(fake_apt):
    result, calls = run(fake_apt, [])
    assert (result.returncode, result.stdout, calls) == (0, "system-packages: present (venv sanity lab)\n", [])


@root_only
def test_a_fresh_machine_gets_what_it_lacks_after_one_update(fake_apt):
    result, calls = run(fake_apt, ALL)
    assert result.returncode == 0, result.stderr
    assert calls == ["update -qq", "install -y -qq --no-install-recommends " + " ".join(ALL)]
    lines = result.stdout.splitlines()
    assert lines[0] == "system-packages: installing " + " ".join(ALL)
    assert lines[1:4] == [
        "  python3 python3-venv ca-certificates git: for the controller venv: Python with venv and ensurepip, HTTPS "
        "to the package index, git",
        "  shellcheck: for ansible-test sanity (shellcheck for the shell scripts)",
        "  systemd-container debootstrap debian-archive-keyring nftables iproute2 openssh-client gpg dpkg-dev: for "
        "lab hosts (systemd-nspawn from a debootstrap root filesystem, network namespaces, nftables, SSH) and the "
        "apt repository stand-in (gpg, dpkg-scanpackages)",
    ]


@root_only
def test_only_the_missing_packages_of_the_named_group(fake_apt):
    result, calls = run(fake_apt, ["debootstrap", "shellcheck", "nftables"], "lab")
    assert result.returncode == 0, result.stderr
    assert calls == ["update -qq", "install -y -qq --no-install-recommends debootstrap nftables"]


@root_only
def test_fresh_package_lists_are_not_updated_again(fake_apt):
    (fake_apt["lists"] / "deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages").write_text("")
    result, calls = run(fake_apt, ["python3-venv"], "venv")
    assert result.returncode == 0, result.stderr
    assert calls == ["install -y -qq --no-install-recommends python3-venv"]


@root_only
def test_dry_run_says_what_it_would_run_and_runs_nothing(fake_apt):
    result, calls = run(fake_apt, ["gpg", "dpkg-dev"], "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "system-packages: would run: apt-get update -qq",
        "system-packages: would run: apt-get install -y -qq --no-install-recommends gpg dpkg-dev",
    ]
    assert calls == []


@root_only
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_another_user_is_told_in_one_line_what_to_run(fake_apt):
    result, calls = run(fake_apt, ["debootstrap", "gpg"], "lab", user=65534)
    assert result.returncode == 1
    assert (result.stdout, calls) == ("", [])
    assert result.stderr == (f"system-packages: missing debootstrap gpg; as root run: {fake_apt['script']} lab "
                             "(or: apt-get install debootstrap gpg)\n")


def test_an_unknown_group_is_refused(fake_apt):
    result, calls = run(fake_apt, [], "docs")
    assert (result.returncode, calls) == (2, [])
    assert result.stderr == "system-packages: unknown group 'docs' (groups: venv, sanity, lab)\n"
