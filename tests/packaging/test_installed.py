# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection as a user installs it: the built tarball in an empty collections path, used from a folder that is
not this checkout, with no ansible.cfg, against one lab host.

preflight, deploy --check --diff on the fresh host, deploy, probe, deploy --check --diff again (nothing would change),
then `ansible-galaxy collection verify --offline`: no run wrote into the installed collection. The probe's reports
land in the default report folder, under the run's Ansible home, and the run says where.

The lab host has a name of its own (pkginst), so Molecule scenarios and a developer's lab are not touched. Needs root,
systemd-nspawn, the lab root filesystem and the wheelhouse (`make units` builds both first); skipped otherwise.
About a minute and a half.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GALAXY = shutil.which("ansible-galaxy", path=str(BIN)) or shutil.which("ansible-galaxy")
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
LAB = ROOT / "tools" / "lab" / "lab"
WHEELHOUSE = ROOT / "build" / "wheelhouse"
LAB_DIR = Path(os.environ.get("GPUFLEET_LAB_DIR", ROOT / "build" / "lab"))  # the lab tool's own setting
HOST = "pkginst"

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(GALAXY is None or PLAYBOOK is None, reason="ansible-core is not installed"),
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("systemd-nspawn") is None, reason="needs root and systemd-nspawn"),
    pytest.mark.skipif(not (LAB_DIR / "rootfs.recipe").exists(), reason="lab root filesystem not built (make lab-rootfs)"),
    pytest.mark.skipif(not (WHEELHOUSE / ".stamp").exists(), reason="wheelhouse not built (make wheelhouse)"),
]

# What a user writes: a host of the lab with the SGLang stand-in from the lab's wheelhouse, one small model.
GROUP_VARS = {
    "nvidia_driver_manage": False,  # the driver role has its own Molecule scenario
    "sglang_install_source": "standin",
    "sglang_install_version": "0.5.23",
    "sglang_install_wheelhouse": "/opt/wheelhouse",
    "sglang_server_args": {"model_path": "Qwen/Qwen3-0.6B", "tp_size": 1},
    "sglang_server_env": {"SGLANG_STANDIN_TIME_SCALE": "0.05", "SGLANG_STANDIN_PACE_SCALE": "1",
                          "SGLANG_STANDIN_PROFILE": "test-fast", "CUDA_VISIBLE_DEVICES": "0"},
    "sglang_server_settle_time": 1,
    "sglang_probe_concurrency": [1],
    "sglang_probe_requests_per_level": 2,
    "sglang_probe_output_tokens": 32,
}


def lab(*args: str) -> str:
    return subprocess.run([str(LAB), *args], capture_output=True, text=True, timeout=180, check=True).stdout


@pytest.fixture(name="installed", scope="module")
def installed_collection(tmp_path_factory):
    """The tarball built from this checkout and installed into an empty collections path; the user's folder and env."""
    work = tmp_path_factory.mktemp("installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "MOLECULE_"))}
    # Python's own bytecode cache beside the controller plugins is not the collection's writing, but verify counts it
    # (docs/installing.md): the test runs as a user who keeps it off.
    env.update(ANSIBLE_HOME=str(work / "ansible-home"), ANSIBLE_COLLECTIONS_PATH=str(work / "collections"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PYTHONDONTWRITEBYTECODE="1")
    build = subprocess.run([GALAXY, "collection", "build", "--output-path", str(work / "dist"), str(ROOT)], cwd=work,
                           env=env, capture_output=True, text=True, check=False, timeout=120)
    assert build.returncode == 0, build.stdout + build.stderr
    tarball = next((work / "dist").glob("gpufleet-sglang-*.tar.gz"))
    install = subprocess.run([GALAXY, "collection", "install", str(tarball), "-p", str(work / "collections")], cwd=work,
                             env=env, capture_output=True, text=True, check=False, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr
    return {"work": work, "env": env, "collection": work / "collections" / "ansible_collections" / "gpufleet" / "sglang"}


@pytest.fixture(name="inventory", scope="module")
def lab_host_inventory(installed):
    """One lab host, booted for this test and removed after it; an inventory for it in the user's folder."""
    work = installed["work"]
    lab("down", HOST)
    lab("up", "--gpu-profile", "l40sx4-pcie-sys", "--wheelhouse", str(WHEELHOUSE), HOST)
    subprocess.run([str(LAB), "exec", HOST, "systemctl", "is-system-running", "--wait"], capture_output=True,
                   timeout=120, check=False)
    folder = work / "inventory"
    (folder / "group_vars").mkdir(parents=True)
    (folder / "lab.json").write_text(lab("inventory", HOST), encoding="utf-8")
    (folder / "group_vars" / "all.yml").write_text(yaml.safe_dump(GROUP_VARS), encoding="utf-8")
    yield folder
    lab("down", HOST)


def playbook(installed, inventory, name, *args):
    result = subprocess.run([PLAYBOOK, "-i", str(inventory), f"gpufleet.sglang.{name}", *args], cwd=installed["work"],
                            env=installed["env"], capture_output=True, text=True, check=False, timeout=600)
    return result, result.stdout + result.stderr


def recap(output: str) -> dict:
    match = re.search(rf"^{HOST}\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M)
    assert match, output[-3000:]
    return dict(zip(("ok", "changed", "unreachable", "failed"), map(int, match.groups())))


def test_the_installed_collection_runs_without_the_checkout_and_stays_as_shipped(installed, inventory):
    assert not (installed["work"] / "ansible.cfg").exists() and ROOT not in installed["work"].parents
    assert not (installed["collection"] / "tests").exists() and not (installed["collection"] / "tools").exists()

    result, out = playbook(installed, inventory, "preflight")
    assert result.returncode == 0, out[-3000:]
    assert "SGLang 0.5.23 launch flags: 0 errors, 0 warnings" in out

    result, out = playbook(installed, inventory, "deploy", "--check", "--diff")
    assert result.returncode == 0, out[-3000:]
    assert recap(out)["failed"] == 0
    assert "would start" in out or "would restart" in out, out[-3000:]

    result, out = playbook(installed, inventory, "deploy")
    assert result.returncode == 0, out[-3000:]
    assert re.search(r"main: SGLang 0\.5\.23 on port 30000, (re)?started .*ready in [0-9.]+ s", out), out[-3000:]

    result, out = playbook(installed, inventory, "probe")
    assert result.returncode == 0, out[-3000:]
    reports = installed["work"] / "ansible-home" / "gpufleet-sglang" / "reports" / "probe"
    (run,) = [p for p in reports.iterdir() if p.is_dir()]
    assert re.fullmatch(r"\d{8}T\d{6}Z", run.name)
    assert f"Probe reports of this run: {run}" in out
    assert sorted(p.name for p in run.iterdir()) == [f"{HOST}.json", f"{HOST}.md"]
    figures = json.loads((run / f"{HOST}.json").read_text(encoding="utf-8"))
    assert [level["concurrency"] for level in figures["levels"]] == [1]

    result, out = playbook(installed, inventory, "deploy", "--check", "--diff")
    assert result.returncode == 0, out[-3000:]
    assert recap(out)["changed"] == 0, out[-4000:]

    verify = subprocess.run([GALAXY, "collection", "verify", "--offline", "gpufleet.sglang"], cwd=installed["work"],
                            env=installed["env"], capture_output=True, text=True, check=False, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "Successfully verified that checksums for 'gpufleet.sglang:" in verify.stdout
