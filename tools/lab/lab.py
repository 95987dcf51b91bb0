"""lab: throwaway systemd hosts for tests and rehearsals, on a machine without Docker.

Each lab host is a systemd-nspawn container booted from one cached Debian bookworm root filesystem
(read-only overlay lower layer), with systemd as PID 1, its own network namespace and address on a
private bridge, and SSH with a key this tool generates. Molecule, the fleet tests and the demo use them.

    lab up [--gpu-profile P] [--wheelhouse DIR] [--nat] NAME...   boot hosts (idempotent)
    lab down [NAME...]                                            halt and remove hosts (all if none named)
    lab list                                                      hosts, addresses, states
    lab exec NAME CMD...                                          run a command on a host over SSH
    lab inventory [NAME...]                                       an Ansible YAML inventory of running hosts
    lab rootfs [--rebuild]                                        build the cached root filesystem now

Everything it makes is named after the lab (bridge, namespaces, veths, cgroups, nft table) and
removed again by `down`; see tools/lab/README.md for the gotchas each step answers.
Must run as root. Standard library only.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Iterator

TOOL_DIR = Path(__file__).resolve().parent
REPO_DIR = TOOL_DIR.parent.parent
LAB_DIR = Path(os.environ.get("GPUFLEET_LAB_DIR", REPO_DIR / "build" / "lab"))
SUITE = os.environ.get("GPUFLEET_LAB_SUITE", "bookworm")
MIRROR = os.environ.get("GPUFLEET_LAB_MIRROR", "http://deb.debian.org/debian")
# A second lab on the same machine (another checkout's tests while this one's run): GPUFLEET_LAB_INSTANCE=1..9
# gives it its own bridge, subnet, netns and veth names, cgroup folder and nft table, so neither touches the other.
INSTANCE = os.environ.get("GPUFLEET_LAB_INSTANCE", "")
if INSTANCE and not re.fullmatch(r"[1-9]", INSTANCE):
    raise SystemExit("lab: GPUFLEET_LAB_INSTANCE must be one digit from 1 to 9, not %r" % INSTANCE)
SUBNET = ipaddress.ip_network(os.environ.get("GPUFLEET_LAB_SUBNET", "10.213.%d.0/24" % (77 + int(INSTANCE or 0))))
BRIDGE = os.environ.get("GPUFLEET_LAB_BRIDGE", "gflab" + (INSTANCE or "0"))
LAB_ID = "gpufleet-lab" + INSTANCE  # cgroup folder, nft table and netns prefix all derive from it
NFT_TABLE = "gpufleet_lab" + INSTANCE
VETH_PREFIX = "v%s-" % (INSTANCE or "l")
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,11}$")  # VETH_PREFIX (3) + name must fit IFNAMSIZ (15)
GPU_STANDIN_DIR = REPO_DIR / "tools" / "standins" / "nvidia_smi"
DEFAULT_GPU_PROFILE = "a6000x2-pcie-phb"

BOOT_TIMEOUT = float(os.environ.get("GPUFLEET_LAB_BOOT_TIMEOUT", "60"))
HALT_TIMEOUT = 20.0
CMD_TIMEOUT = 60.0
ROOTFS_TIMEOUT = 1800.0


class LabError(Exception):
    """A failure with a message that tells the operator what to do."""


# --------------------------------------------------------------------------- small helpers

def run(cmd: list[str], *, check: bool = True, timeout: float = CMD_TIMEOUT, quiet: bool = False,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command with a bounded time; raise LabError with its stderr on failure."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"timed out after {timeout:.0f}s: {' '.join(cmd)}") from exc
    if check and proc.returncode != 0:
        raise LabError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")
    if not quiet and proc.returncode != 0:
        log(f"  (ignored) {' '.join(cmd)}: {proc.stderr.strip()}")
    return proc


def chroot_env() -> dict[str, str]:
    """This environment without the controller's temporary folder: its path (TMPDIR, TMP, TEMP) does not exist inside
    the root filesystem, and tools run there (update-ca-certificates' mktemp) fail on it."""
    return {key: value for key, value in os.environ.items() if key not in ("TMPDIR", "TMP", "TEMP")}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours is not alive
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def is_mountpoint(path: Path) -> bool:
    target = str(path.resolve()) if path.exists() else str(path)
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        return any(line.split()[1] == target for line in mounts)


def link_exists(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


def netns_name(host: str) -> str:
    return f"{LAB_ID}-{host}"


def veth_name(host: str) -> str:
    return f"{VETH_PREFIX}{host}"


def cgroup_dirs(host: str | None = None) -> list[Path]:
    """The per-host cgroup folders (gotcha 2): one under each hierarchy that nspawn looks at."""
    dirs = []
    for hierarchy in ("systemd", "unified"):
        root = Path("/sys/fs/cgroup") / hierarchy
        if root.is_dir():
            dirs.append(root / LAB_ID / host if host else root / LAB_ID)
    if not dirs and Path("/sys/fs/cgroup/cgroup.procs").exists():  # pure cgroup v2 machine
        dirs.append(Path("/sys/fs/cgroup") / LAB_ID / host if host else Path("/sys/fs/cgroup") / LAB_ID)
    return dirs


# --------------------------------------------------------------------------- state

class State:
    """hosts.json under an exclusive lock: which hosts exist, their address, pid and profile."""

    def __init__(self) -> None:
        self.path = LAB_DIR / ("hosts%s.json" % INSTANCE)
        self.data: dict = {"hosts": {}, "saved": {}}

    @contextlib.contextmanager
    def locked(self) -> Iterator["State"]:
        LAB_DIR.mkdir(parents=True, exist_ok=True)
        with open(LAB_DIR / ("lab%s.lock" % INSTANCE), "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.path.exists():
                self.data = json.loads(self.path.read_text())
            try:
                yield self
            finally:
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text(json.dumps(self.data, indent=2, sort_keys=True))
                tmp.replace(self.path)

    @property
    def hosts(self) -> dict:
        return self.data.setdefault("hosts", {})

    def allocate_ip(self, name: str) -> str:
        if name in self.hosts:
            return self.hosts[name]["ip"]
        used = {h["ip"] for h in self.hosts.values()}
        for offset, addr in enumerate(SUBNET.hosts()):
            if offset >= 9 and str(addr) not in used:  # .1 is the bridge; hosts from .10
                return str(addr)
        raise LabError(f"no free address left in {SUBNET}")


# --------------------------------------------------------------------------- prerequisites

def require_root_and_tools(*tools: str) -> None:
    if os.geteuid() != 0:
        raise LabError("lab must run as root (it mounts overlays, makes network namespaces and boots containers)")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        hints = {"systemd-nspawn": "systemd-container", "debootstrap": "debootstrap", "nft": "nftables",
                 "ip": "iproute2", "ssh": "openssh-client", "ssh-keygen": "openssh-client"}
        pkgs = sorted({hints.get(t, t) for t in missing})
        raise LabError(f"missing commands: {', '.join(missing)}; install them: apt-get install -y {' '.join(pkgs)}")
    if "overlay" not in Path("/proc/filesystems").read_text():
        raise LabError("the kernel has no overlay filesystem (modprobe overlay), which lab hosts are built on")


# --------------------------------------------------------------------------- root filesystem

def rootfs_recipe_hash() -> str:
    """What the cached root filesystem was built from; a change rebuilds it."""
    digest = hashlib.sha256()
    for part in (SUITE, MIRROR, (TOOL_DIR / "rootfs-packages").read_text(), (TOOL_DIR / "rootfs-setup.sh").read_text()):
        digest.update(part.encode())
    return digest.hexdigest()[:16]


def rootfs_packages() -> list[str]:
    lines = (TOOL_DIR / "rootfs-packages").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ensure_rootfs(rebuild: bool = False) -> Path:
    """Build the cached root filesystem once (debootstrap, about a minute), reuse it afterwards."""
    rootfs = LAB_DIR / "rootfs"
    stamp = LAB_DIR / "rootfs.recipe"
    want = rootfs_recipe_hash()
    if not rebuild and rootfs.is_dir() and stamp.exists() and stamp.read_text().strip() == want:
        return rootfs
    require_root_and_tools("debootstrap")
    if any((LAB_DIR / "hosts").glob("*")):
        raise LabError("hosts are up on the old root filesystem: run `lab down` before rebuilding it")
    log(f"lab: building the {SUITE} root filesystem (recipe {want}); cached afterwards in {rootfs}")
    building = LAB_DIR / "rootfs.building"
    shutil.rmtree(building, ignore_errors=True)
    run(["debootstrap", "--variant=minbase", "--include=" + ",".join(rootfs_packages()), SUITE, str(building), MIRROR],
        timeout=ROOTFS_TIMEOUT)
    # The controller's extra CA certificates (HTTPS may be re-signed by a proxy): gotcha 4.
    extra_ca = Path("/usr/local/share/ca-certificates")
    if extra_ca.is_dir():
        shutil.copytree(extra_ca, building / "usr/local/share/ca-certificates", dirs_exist_ok=True)
        run(["chroot", str(building), "update-ca-certificates"], timeout=120, env=chroot_env())
    shutil.copy(TOOL_DIR / "rootfs-setup.sh", building / "tmp/rootfs-setup.sh")
    run(["chroot", str(building), "/bin/sh", "/tmp/rootfs-setup.sh"], timeout=300, env=chroot_env())
    (building / "tmp/rootfs-setup.sh").unlink()
    shutil.rmtree(rootfs, ignore_errors=True)
    building.rename(rootfs)
    stamp.write_text(want + "\n")
    return rootfs


def ensure_ssh_key() -> Path:
    key = LAB_DIR / "ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpufleet-lab", "-f", str(key)])
    return key


# --------------------------------------------------------------------------- network

def ensure_bridge(state: State) -> None:
    saved = state.data.setdefault("saved", {})
    if "netns_was_mounted" not in saved:
        saved["netns_was_mounted"] = is_mountpoint(Path("/run/netns"))
        saved["nspawn_run_dir_existed"] = Path("/run/systemd/nspawn").exists()
    if not link_exists(BRIDGE):
        run(["ip", "link", "add", BRIDGE, "type", "bridge"])
        run(["ip", "addr", "add", f"{next(SUBNET.hosts())}/{SUBNET.prefixlen}", "dev", BRIDGE])
    run(["ip", "link", "set", BRIDGE, "up"])


def enable_nat(state: State) -> None:
    """Egress for apt/pip inside hosts: masquerade the lab subnet (gotchas 4 and 8)."""
    require_root_and_tools("nft")
    saved = state.data.setdefault("saved", {})
    if "ip_forward" not in saved:
        saved["ip_forward"] = Path("/proc/sys/net/ipv4/ip_forward").read_text().strip()
    Path("/proc/sys/net/ipv4/ip_forward").write_text("1\n")
    if run(["nft", "list", "table", "ip", NFT_TABLE], check=False, quiet=True).returncode != 0:
        rules = (f"table ip {NFT_TABLE} {{ chain postrouting {{ type nat hook postrouting priority 100 ; "
                 f"ip saddr {SUBNET} oifname != \"{BRIDGE}\" masquerade ; }} ; }}")  # nft 1.0.6 needs the ; after a chain
        run(["nft", rules])


def teardown_network(state: State) -> None:
    """After the last host: bridge, nft table, ip_forward and /run/netns as they were before the lab."""
    saved = state.data.get("saved", {})
    if link_exists(BRIDGE):
        run(["ip", "link", "del", BRIDGE], check=False)
    if shutil.which("nft") and run(["nft", "list", "table", "ip", NFT_TABLE], check=False, quiet=True).returncode == 0:
        run(["nft", "delete", "table", "ip", NFT_TABLE], check=False)
    if "ip_forward" in saved:
        Path("/proc/sys/net/ipv4/ip_forward").write_text(saved["ip_forward"] + "\n")
    netns_dir = Path("/run/netns")
    if not saved.get("netns_was_mounted", True) and netns_dir.is_dir() and not any(netns_dir.iterdir()):
        while is_mountpoint(netns_dir):  # `ip netns add` may have stacked more than one bind mount
            if run(["umount", str(netns_dir)], check=False, quiet=True).returncode != 0:
                break
        with contextlib.suppress(OSError):
            netns_dir.rmdir()
    if not saved.get("nspawn_run_dir_existed", True):
        for leftover in (Path("/run/systemd/nspawn/propagate"), Path("/run/systemd/nspawn/locks"), Path("/run/systemd/nspawn")):
            with contextlib.suppress(OSError):
                leftover.rmdir()  # only when empty
    for cgroup in cgroup_dirs():
        with contextlib.suppress(OSError):
            cgroup.rmdir()
    state.data["saved"] = {}


def setup_host_network(name: str, ip: str) -> None:
    ns, veth = netns_name(name), veth_name(name)
    if link_exists(veth):  # a stale veth from a halt cut short (gotcha 9)
        run(["ip", "link", "del", veth], check=False)
    if Path(f"/run/netns/{ns}").exists():
        run(["ip", "netns", "del", ns], check=False)
    run(["ip", "netns", "add", ns])
    run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "host0", "netns", ns])
    run(["ip", "link", "set", veth, "master", BRIDGE, "up"])
    gateway = str(next(SUBNET.hosts()))
    for cmd in (["link", "set", "lo", "up"], ["addr", "add", f"{ip}/{SUBNET.prefixlen}", "dev", "host0"],
                ["link", "set", "host0", "up"], ["route", "add", "default", "via", gateway]):
        run(["ip", "-n", ns, *cmd])


# --------------------------------------------------------------------------- one host

class Host:
    """One lab host: its folders, overlay, namespace and nspawn process."""

    def __init__(self, name: str) -> None:
        if not NAME_RE.match(name):
            raise LabError(f"bad host name {name!r}: use 1-12 characters a-z, 0-9 and '-', starting with a letter "
                           "(interface names are limited to 15 characters)")
        self.name = name
        self.dir = LAB_DIR / "hosts" / name
        self.merged = self.dir / "merged"

    # -- files written into the overlay before boot (gotchas 12 and 13)

    def write_identity(self, ip: str, ssh_key: Path, gpu_profile: str | None, wheelhouse: Path | None) -> None:
        root = self.merged
        (root / "etc/hostname").write_text(self.name + "\n")
        (root / "etc/machine-id").write_text(uuid.uuid4().hex + "\n")
        (root / "etc/hosts").write_text(f"127.0.0.1\tlocalhost\n{ip}\t{self.name}\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        ssh_dir = root / "root/.ssh"
        ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        auth = ssh_dir / "authorized_keys"
        auth.write_text(Path(str(ssh_key) + ".pub").read_text())
        auth.chmod(0o600)
        host_key = root / "etc/ssh/ssh_host_ed25519_key"
        if not host_key.exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{self.name}", "-f", str(host_key)])
        (root / "etc/gpufleet-lab-host").write_text(json.dumps({"name": self.name, "ip": ip, "gpu_profile": gpu_profile}) + "\n")
        if gpu_profile:
            self.install_gpu_standin(gpu_profile)
        if wheelhouse:
            (root / "opt/wheelhouse").mkdir(parents=True, exist_ok=True)
            (root / "etc/pip.conf").write_text("[global]\nno-index = true\nfind-links = /opt/wheelhouse\n")

    def install_gpu_standin(self, profile: str) -> None:
        """The nvidia-smi stand-in (a test double, never for real hosts) printing a chosen machine's outputs."""
        script = GPU_STANDIN_DIR / "nvidia_smi_standin.py"
        profile_file = GPU_STANDIN_DIR / "profiles" / f"{profile}.json"
        if not script.exists() or not profile_file.exists():
            known = sorted(p.stem for p in (GPU_STANDIN_DIR / "profiles").glob("*.json"))
            raise LabError(f"unknown GPU profile {profile!r}; known: {', '.join(known) or 'none'} (or --gpu-profile none)")
        target = self.merged / "usr/local/bin/nvidia-smi"
        body = script.read_text()
        if body.startswith("#!"):
            body = body.split("\n", 1)[1]
        target.write_text("#!/usr/bin/python3\n" + body)  # the host's own Python, like a real tool
        target.chmod(0o755)
        (self.merged / "etc/nvidia-smi-standin").mkdir(exist_ok=True)
        shutil.copy(profile_file, self.merged / "etc/nvidia-smi-standin/profile.json")

    # -- lifecycle

    def mount_overlay(self, rootfs: Path) -> None:
        for sub in ("upper", "work", "merged"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        if not is_mountpoint(self.merged):
            opts = f"lowerdir={rootfs},upperdir={self.dir / 'upper'},workdir={self.dir / 'work'}"
            run(["mount", "-t", "overlay", "overlay", "-o", opts, str(self.merged)])

    def spawn(self, wheelhouse: Path | None) -> int:
        """Start systemd-nspawn detached, inside its own cgroups (gotchas 1, 2, 3, 7)."""
        cgroups = cgroup_dirs(self.name)
        for cgroup in cgroups:
            cgroup.mkdir(parents=True, exist_ok=True)
        cmd = ["systemd-nspawn", "--boot", "--register=no", "--keep-unit", "--quiet",
               f"--network-namespace-path=/run/netns/{netns_name(self.name)}", "--console=passive",
               "--link-journal=no", "--resolv-conf=copy-host", f"--machine={self.name}", "-D", str(self.merged)]
        if wheelhouse:
            cmd.append(f"--bind-ro={wheelhouse}:/opt/wheelhouse")

        def enter_cgroups() -> None:
            for cgroup in cgroups:
                (cgroup / "cgroup.procs").write_text(str(os.getpid()))

        console = open(self.dir / "console.log", "ab")  # pylint: disable=consider-using-with
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=console, stderr=console,  # pylint: disable=consider-using-with
                                start_new_session=True, preexec_fn=enter_cgroups)
        console.close()
        return proc.pid

    def wait_ssh(self, ip: str, pid: int) -> None:
        deadline = time.monotonic() + BOOT_TIMEOUT
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                raise LabError(f"{self.name}: systemd-nspawn exited during boot; console log:\n{self.console_tail()}")
            with contextlib.suppress(OSError), socket.create_connection((ip, 22), timeout=1) as sock:
                sock.settimeout(2)
                if sock.recv(64).startswith(b"SSH-"):
                    return
            time.sleep(0.1)
        raise LabError(f"{self.name}: SSH on {ip}:22 did not answer within {BOOT_TIMEOUT:.0f}s; console log:\n{self.console_tail()}")

    def console_tail(self, lines: int = 30) -> str:
        path = self.dir / "console.log"
        if not path.exists():
            return "(no console log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def halt(self, pid: int | None, ip: str | None) -> None:
        """Clean halt (SIGTERM makes nspawn power the container off), then kill what is left."""
        if ip:
            close_ssh_masters(ip)
        if pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + HALT_TIMEOUT
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if pid_alive(pid):
                log(f"lab: {self.name} did not halt within {HALT_TIMEOUT:.0f}s; killing it")
                os.kill(pid, signal.SIGKILL)
        for cgroup in cgroup_dirs(self.name):
            kill_cgroup(cgroup)

    def remove(self) -> None:
        """Remove every trace of the host (gotchas 9 and 12)."""
        for _attempt in range(3):
            if not is_mountpoint(self.merged):
                break
            if run(["umount", str(self.merged)], check=False, quiet=True).returncode != 0:
                time.sleep(0.5)
        if is_mountpoint(self.merged):
            run(["umount", "-l", str(self.merged)], check=False)
        if link_exists(veth_name(self.name)):
            run(["ip", "link", "del", veth_name(self.name)], check=False)
        if Path(f"/run/netns/{netns_name(self.name)}").exists():
            run(["ip", "netns", "del", netns_name(self.name)], check=False)
        shutil.rmtree(Path("/run/systemd/nspawn/propagate") / self.name, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def kill_cgroup(cgroup: Path) -> None:
    """Kill every process left in a cgroup tree, then remove the tree bottom-up."""
    if not cgroup.is_dir():
        return
    for _round in range(50):
        pids = [int(p) for procs in cgroup.rglob("cgroup.procs") for p in procs.read_text().split()]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    for sub in sorted((p for p in cgroup.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        cgroup.rmdir()


def close_ssh_masters(ip: str) -> None:
    """End controller-side SSH ControlPersist masters to a host before it halts (gotcha 9)."""
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if argv and argv[0].endswith(b"ssh") and any(a.endswith(b"@" + ip.encode()) or a == ip.encode() for a in argv):
                os.kill(int(proc.name), signal.SIGTERM)


# --------------------------------------------------------------------------- commands

def cmd_up(args: argparse.Namespace) -> int:
    require_root_and_tools("systemd-nspawn", "ip", "ssh-keygen", "mount")
    names = list(dict.fromkeys(args.names))
    hosts = [Host(n) for n in names]
    wheelhouse = Path(args.wheelhouse).resolve() if args.wheelhouse else None
    if wheelhouse and not wheelhouse.is_dir():
        raise LabError(f"--wheelhouse {wheelhouse} is not a folder")
    profile = None if args.gpu_profile == "none" else args.gpu_profile
    rootfs = ensure_rootfs()
    key = ensure_ssh_key()
    state = State()
    with state.locked():
        ensure_bridge(state)
        if args.nat:
            enable_nat(state)
        todo = []
        for host in hosts:
            entry = state.hosts.get(host.name)
            if entry and pid_alive(entry.get("pid")):
                log(f"lab: {host.name} already up at {entry['ip']}")
                continue
            if entry or host.dir.exists():  # left over from a crash: start clean
                host.halt(entry.get("pid") if entry else None, None)
                host.remove()
            ip = state.allocate_ip(host.name)
            state.hosts[host.name] = {"ip": ip, "pid": None, "gpu_profile": profile,
                                      "wheelhouse": str(wheelhouse) if wheelhouse else None}
            todo.append((host, ip))

        errors: list[str] = []

        def boot(host: Host, ip: str) -> None:
            try:
                host.mount_overlay(rootfs)
                host.write_identity(ip, key, profile, wheelhouse)
                setup_host_network(host.name, ip)
                pid = host.spawn(wheelhouse)
                state.hosts[host.name]["pid"] = pid
                host.wait_ssh(ip, pid)
                log(f"lab: {host.name} up at {ip}")
            except LabError as exc:
                errors.append(str(exc))

        threads = [threading.Thread(target=boot, args=item) for item in todo]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise LabError("\n".join(errors))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    require_root_and_tools("ip")
    state = State()
    with state.locked():
        names = args.names or sorted(set(state.hosts) | {p.name for p in (LAB_DIR / "hosts").glob("*")})
        hosts = [Host(n) for n in names]
        for host in hosts:
            entry = state.hosts.get(host.name, {})
            host.halt(entry.get("pid"), entry.get("ip"))
            host.remove()
            state.hosts.pop(host.name, None)
            log(f"lab: {host.name} down")
        if not state.hosts:
            teardown_network(state)
    return 0


def cmd_list(_args: argparse.Namespace) -> int:
    state = State()
    with state.locked():
        if not state.hosts:
            print("no lab hosts")
        for name, entry in sorted(state.hosts.items()):
            status = "running" if pid_alive(entry.get("pid")) else "dead"
            print(f"{name:<12} {entry['ip']:<15} {status:<8} gpu={entry.get('gpu_profile') or 'none'}")
    return 0


def ssh_command(ip: str) -> list[str]:
    key = LAB_DIR / "ssh" / "id_ed25519"
    return ["ssh", "-i", str(key), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", f"root@{ip}"]


def running_entry(name: str) -> dict:
    state = State()
    with state.locked():
        entry = state.hosts.get(name)
    if not entry or not pid_alive(entry.get("pid")):
        raise LabError(f"lab host {name!r} is not up (lab up {name})")
    return entry


def cmd_exec(args: argparse.Namespace) -> int:
    entry = running_entry(args.name)
    return subprocess.call([*ssh_command(entry["ip"]), "--", *args.command])


def cmd_inventory(args: argparse.Namespace) -> int:
    """An Ansible inventory (YAML) for running hosts; JSON is valid YAML, so no PyYAML is needed."""
    state = State()
    with state.locked():
        names = args.names or sorted(state.hosts)
        hosts = {}
        for name in names:
            entry = state.hosts.get(name)
            if not entry:
                raise LabError(f"lab host {name!r} is not up")
            hosts[name] = {"ansible_host": entry["ip"], "lab_gpu_profile": entry.get("gpu_profile")}
    inventory = {"all": {"hosts": hosts, "vars": {
        "ansible_user": "root",
        "ansible_ssh_private_key_file": str(LAB_DIR / "ssh" / "id_ed25519"),
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
        "ansible_python_interpreter": "/usr/bin/python3",
    }}}
    print(json.dumps(inventory, indent=2))
    return 0


def cmd_rootfs(args: argparse.Namespace) -> int:
    require_root_and_tools("debootstrap")
    print(ensure_rootfs(rebuild=args.rebuild))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab", description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="boot lab hosts (idempotent)")
    up.add_argument("names", nargs="+", metavar="NAME")
    up.add_argument("--gpu-profile", default=os.environ.get("GPUFLEET_LAB_GPU_PROFILE", DEFAULT_GPU_PROFILE),
                    help=f"nvidia-smi stand-in profile, or 'none' (default {DEFAULT_GPU_PROFILE})")
    up.add_argument("--wheelhouse", default=os.environ.get("GPUFLEET_LAB_WHEELHOUSE"),
                    help="folder bind-mounted read-only at /opt/wheelhouse; pip inside then installs offline from it")
    up.add_argument("--nat", action="store_true", help="give hosts egress through the controller (masquerade)")
    up.set_defaults(func=cmd_up)
    down = sub.add_parser("down", help="halt and remove hosts (all when none is named)")
    down.add_argument("names", nargs="*", metavar="NAME")
    down.set_defaults(func=cmd_down)
    sub.add_parser("list", help="hosts, addresses and states").set_defaults(func=cmd_list)
    exe = sub.add_parser("exec", help="run a command on a host over SSH")
    exe.add_argument("name", metavar="NAME")
    exe.add_argument("command", nargs=argparse.REMAINDER, metavar="CMD")
    exe.set_defaults(func=cmd_exec)
    inv = sub.add_parser("inventory", help="print an Ansible inventory of running hosts")
    inv.add_argument("names", nargs="*", metavar="NAME")
    inv.set_defaults(func=cmd_inventory)
    rootfs = sub.add_parser("rootfs", help="build the cached root filesystem now")
    rootfs.add_argument("--rebuild", action="store_true")
    rootfs.set_defaults(func=cmd_rootfs)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except LabError as exc:
        log(f"lab: error: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
