"""The lab tool for real: boots three hosts and proves that `down` leaves the machine as it was.

Needs root, systemd-nspawn and the cached root filesystem (`make lab-rootfs`); skipped otherwise.
The hosts get their own names so a developer's running lab is not touched.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tools" / "lab" / "lab"
HOSTS = ["tlab-a", "tlab-b", "tlab-c"]

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("systemd-nspawn") is None,
                       reason="needs root and systemd-nspawn"),
    pytest.mark.skipif(not (REPO / "build" / "lab" / "rootfs.recipe").exists(),
                       reason="lab root filesystem not built (make lab-rootfs)"),
]


def lab(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([str(LAB), *args], capture_output=True, text=True, timeout=120, check=check)


def lab_module():
    """The lab tool's own names for this instance (GPUFLEET_LAB_INSTANCE): bridge, veth prefix, netns, table, folders."""
    spec = importlib.util.spec_from_loader("gpufleet_lab_tool", importlib.machinery.SourceFileLoader("gpufleet_lab_tool", str(LAB.with_suffix(".py"))))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def machine_snapshot() -> dict:
    """Everything this lab instance may create on the controller, read from the kernel and the filesystem.

    Scoped to the instance's own names, so another instance running beside it (another checkout's tests) is not
    mistaken for a leak; everything the tool creates carries those names.
    """
    tool = lab_module()

    def out(*cmd: str) -> str:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout

    links = [line.split()[0].split("@")[0] for line in out("ip", "-br", "link").splitlines()]
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    return {
        "links": sorted(name for name in links if name == tool.BRIDGE or name.startswith(tool.VETH_PREFIX)),
        "netns": sorted(line for line in out("ip", "netns", "list").splitlines() if line.startswith(tool.LAB_ID + "-")),
        "mounts": sorted(m for m in mounts if m.startswith(str(tool.LAB_DIR)) or m in ("/run/netns",)),
        "nft": out("nft", "list", "table", "ip", tool.NFT_TABLE) if shutil.which("nft") else "",
        "ip_forward": Path("/proc/sys/net/ipv4/ip_forward").read_text(),
        "cgroups": sorted(str(p) for p in Path("/sys/fs/cgroup").glob("*/" + tool.LAB_ID)),
        "run_netns": Path("/run/netns").exists(),
        "run_nspawn": Path("/run/systemd/nspawn").exists(),
    }


@pytest.fixture()
def clean_lab():
    lab("down", *HOSTS, check=False)
    before = machine_snapshot()
    yield before
    lab("down", *HOSTS, check=False)


def test_up_is_real_and_down_restores_the_machine(clean_lab: dict) -> None:
    others_up = json.loads(lab("inventory").stdout)["all"]["hosts"] if lab("list").stdout.strip() != "no lab hosts" else {}
    lab("up", "--gpu-profile", "none", *HOSTS)
    lab("up", "--gpu-profile", "none", *HOSTS)  # idempotent: a second up keeps the running hosts

    inventory = json.loads(lab("inventory", *HOSTS).stdout)["all"]["hosts"]
    addresses = {name: host["ansible_host"] for name, host in inventory.items()}
    assert len(set(addresses.values())) == 3

    machine_ids = set()
    for name in HOSTS:
        facts = lab("exec", name, "systemctl is-system-running --wait; cat /proc/1/comm; hostname; cat /etc/machine-id; "
                    "ip -4 -o addr show host0").stdout.split()
        state, pid1, hostname, machine_id = facts[:4]
        assert state in ("running", "degraded")
        assert pid1 == "systemd"
        assert hostname == name
        assert addresses[name] + "/24" in facts
        machine_ids.add(machine_id)
        # journald and systemctl work for a real unit
        assert lab("exec", name, "systemctl is-active ssh.service").stdout.strip() == "active"
        assert "Started" in lab("exec", name, "journalctl -u ssh.service --no-pager").stdout
    assert len(machine_ids) == 3

    # each host sees only its own processes (its own cgroup, gotcha 2)
    ps = lab("exec", HOSTS[0], "ps -e -o comm=").stdout.split()
    assert ps.count("systemd") == 1

    # hosts reach each other on the bridge
    ping = lab("exec", HOSTS[0], f"python3 -c \"import socket; socket.create_connection(('{addresses[HOSTS[1]]}', 22), 3)\"", check=False)
    assert ping.returncode == 0, ping.stderr

    lab("down", *HOSTS)
    lab("down", *HOSTS)  # idempotent
    if not others_up:
        assert machine_snapshot() == clean_lab
    for name in HOSTS:
        assert not (REPO / "build" / "lab" / "hosts" / name).exists()


def test_bad_names_and_unknown_hosts_get_clear_errors() -> None:
    bad = lab("up", "Not_A_Name", check=False)
    assert bad.returncode == 1
    assert "bad host name 'Not_A_Name'" in bad.stderr
    missing = lab("exec", "tlab-none", "true", check=False)
    assert missing.returncode == 1
    assert "is not up" in missing.stderr
