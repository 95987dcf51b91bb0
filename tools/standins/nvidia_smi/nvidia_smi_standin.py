#!/usr/bin/env python
"""nvidia-smi stand-in for GPU-less test hosts (lab hosts, Molecule, unit tests).

TEST STAND-IN ONLY. Never install this on a host with a real NVIDIA driver: it prints a
machine profile from a JSON file, not the state of any hardware.

Why it exists: the gpu_facts module parses nvidia-smi text when NVML cannot be loaded, and the
gpu_tuning role turns those facts into NCCL settings. On machines without GPUs the only way to run
that path for real is a program that prints the real tool's output formats for a chosen machine.
Formats follow captured outputs of drivers 565-595 (see README.md for the sources).

Profile: $NVIDIA_SMI_STANDIN_PROFILE (a path, or a profile name from the profiles/ folder next to
this file), else /etc/nvidia-smi-standin/profile.json. With neither, it prints what nvidia-smi prints
when no driver is loaded and exits 9. Persistence mode set with -pm is kept in a small state file
($NVIDIA_SMI_STANDIN_STATE, default /run/nvidia-smi-standin/state.json): like the real setting it is
gone after a reboot.

Standard library only, Python >= 3.9.
"""

import datetime
import json
import os
import sys

DEFAULT_PROFILE = "/etc/nvidia-smi-standin/profile.json"
DEFAULT_STATE = "/run/nvidia-smi-standin/state.json"
PROFILE_DIR = os.path.join(os.path.dirname(os.path.realpath(__file__)), "profiles")

# nvidia-smi return codes (man nvidia-smi, RETURN VALUE).
RC_OK = 0
RC_INVALID_ARG = 2
RC_NOT_SUPPORTED = 3
RC_NO_PERMISSION = 4
RC_NOT_FOUND = 6
RC_NO_DRIVER = 9

NO_DRIVER_MSG = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)

TOPO_LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""

P2P_LEGEND = """
Legend:

  X    = Self
  OK   = Status Ok
  CNS  = Chipset not supported
  GNS  = GPU not supported
  TNS  = Topology not supported
  NS   = Not supported
  DR   = Disabled by regkey
  U    = Unknown
"""

P2P_CAPS = {"r": "r", "w": "w", "n": "n", "a": "a", "p": "p",
            "read": "r", "write": "w", "nvlink": "n", "atomics": "a", "prop": "p"}

TABLE_RULE = "+-----------------------------------------+------------------------+----------------------+"
WIDE_RULE = "+" + "-" * 89 + "+"


class StandinError(Exception):
    """An error the real tool would report: message text and exit code."""

    def __init__(self, message, rc):
        super().__init__(message)
        self.message = message
        self.rc = rc


def _fmt_w(value):
    return "%.2f" % float(value)


# Query fields: canonical name -> (unit shown in the csv header or None, getter(profile, index, gpu, state)).
def _field_table():
    def g(key, default=None):
        return lambda prof, idx, gpu, st: gpu.get(key, default)

    def mem_free(prof, idx, gpu, st):
        return _fb_free(gpu)

    def bus_part(part):
        def get(prof, idx, gpu, st):
            dom, bus, devfn = gpu["pci_bus_id"].split(":")
            dev = devfn.split(".")[0]
            return {"domain": "0x" + dom[-4:], "bus": "0x" + bus, "device": "0x" + dev}[part]
        return get

    return {
        "timestamp": (None, lambda prof, idx, gpu, st: datetime.datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]),
        "driver_version": (None, lambda prof, idx, gpu, st: prof["driver_version"]),
        "count": (None, lambda prof, idx, gpu, st: len(prof["gpus"])),
        "index": (None, lambda prof, idx, gpu, st: idx),
        "name": (None, g("name")),
        "serial": (None, g("serial", "[N/A]")),
        "uuid": (None, g("uuid")),
        "vbios_version": (None, g("vbios_version", "[N/A]")),
        "pci.bus_id": (None, g("pci_bus_id")),
        "pci.domain": (None, bus_part("domain")),
        "pci.bus": (None, bus_part("bus")),
        "pci.device": (None, bus_part("device")),
        "pcie.link.gen.current": (None, g("pcie_gen_current")),
        "pcie.link.gen.gpucurrent": (None, g("pcie_gen_current")),
        "pcie.link.gen.max": (None, g("pcie_gen_max")),
        "pcie.link.gen.gpumax": (None, g("pcie_gen_max")),
        "pcie.link.gen.hostmax": (None, g("pcie_gen_hostmax", "[N/A]")),
        "pcie.link.width.current": (None, g("pcie_width_current")),
        "pcie.link.width.max": (None, g("pcie_width_max")),
        "persistence_mode": (None, lambda prof, idx, gpu, st: _persistence(gpu, st)),
        "display_active": (None, lambda prof, idx, gpu, st: "Enabled" if gpu.get("display_active") == "On" else "Disabled"),
        "pstate": (None, g("pstate", "P0")),
        "compute_mode": (None, g("compute_mode", "Default")),
        "compute_cap": (None, g("compute_cap")),
        "mig.mode.current": (None, lambda prof, idx, gpu, st: gpu.get("mig_mode") if gpu.get("mig_mode") in ("Enabled", "Disabled") else "[N/A]"),
        "ecc.mode.current": (None, lambda prof, idx, gpu, st: "[N/A]" if gpu.get("ecc") == "N/A" else ("Disabled" if gpu.get("ecc") == "Off" else "Enabled")),
        "memory.total": ("MiB", g("memory_total_mib")),
        "memory.reserved": ("MiB", g("memory_reserved_mib", 0)),
        "memory.used": ("MiB", g("memory_used_mib", 0)),
        "memory.free": ("MiB", mem_free),
        "temperature.gpu": (None, g("temperature_c")),
        "utilization.gpu": ("%", g("utilization_gpu", 0)),
        "utilization.memory": ("%", g("utilization_memory", 0)),
        "fan.speed": ("%", lambda prof, idx, gpu, st: "[N/A]" if gpu.get("fan_speed", "N/A") == "N/A" else gpu["fan_speed"].rstrip("%")),
        "power.draw": ("W", lambda prof, idx, gpu, st: _fmt_w(gpu.get("power_draw_w", 0))),
        "power.limit": ("W", lambda prof, idx, gpu, st: _fmt_w(gpu["power_limit_w"])),
        "enforced.power.limit": ("W", lambda prof, idx, gpu, st: _fmt_w(gpu["power_limit_w"])),
        "power.default_limit": ("W", lambda prof, idx, gpu, st: _fmt_w(gpu.get("power_default_limit_w", gpu["power_limit_w"]))),
        "power.min_limit": ("W", lambda prof, idx, gpu, st: _fmt_w(gpu.get("power_min_limit_w", 100))),
        "power.max_limit": ("W", lambda prof, idx, gpu, st: _fmt_w(gpu.get("power_max_limit_w", gpu["power_limit_w"]))),
    }


FIELD_ALIASES = {"gpu_name": "name", "gpu_uuid": "uuid", "gpu_serial": "serial", "gpu_bus_id": "pci.bus_id",
                 "persistence-mode": "persistence_mode", "enforced.power.limit": "enforced.power.limit"}


def _fb_free(gpu):
    """Free frame buffer: the profile's figure when given (the driver rounds), else total - reserved - used."""
    if "memory_free_mib" in gpu:
        return gpu["memory_free_mib"]
    return gpu["memory_total_mib"] - gpu.get("memory_reserved_mib", 0) - gpu.get("memory_used_mib", 0)


def _persistence(gpu, state):
    return state.get("persistence", {}).get(gpu["uuid"], gpu.get("persistence_mode", "Disabled"))


def _major(version):
    try:
        return int(str(version).split(".", maxsplit=1)[0])
    except ValueError:
        return 0


def resolve_profile_path(environ):
    """Profile path from the environment, a bare profile name, or the installed default."""
    value = environ.get("NVIDIA_SMI_STANDIN_PROFILE", "")
    if value:
        if os.path.exists(value):
            return value
        named = os.path.join(PROFILE_DIR, value if value.endswith(".json") else value + ".json")
        if os.sep not in value and os.path.exists(named):
            return named
        return None
    if os.path.exists(DEFAULT_PROFILE):
        return DEFAULT_PROFILE
    return None


def load_state(environ):
    """Persistence settings made with -pm (an empty state after a reboot, like the real driver)."""
    path = environ.get("NVIDIA_SMI_STANDIN_STATE", DEFAULT_STATE)
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def save_state(environ, state):
    """Keep -pm settings for later calls; a read-only /run just means they are not kept."""
    path = environ.get("NVIDIA_SMI_STANDIN_STATE", DEFAULT_STATE)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
    except OSError:
        pass


class Smi:
    """Renders one profile in nvidia-smi's formats."""

    def __init__(self, profile, state, environ):
        self.prof = profile
        self.gpus = profile.get("gpus", [])
        self.state = state
        self.environ = environ
        self.now = datetime.datetime.now()

    # -- selection -------------------------------------------------------------------------------
    def select(self, ids):
        """GPUs chosen by -i (index, UUID or bus id, comma-separated), all without it."""
        if ids is None:
            return list(enumerate(self.gpus))
        chosen = []
        for token in ids.split(","):
            token = token.strip()
            for idx, gpu in enumerate(self.gpus):
                if token in (str(idx), gpu["uuid"], gpu["pci_bus_id"], gpu["pci_bus_id"][4:]):
                    chosen.append((idx, gpu))
                    break
            else:
                raise StandinError("No devices were found\n", RC_NOT_FOUND)
        return chosen

    # -- --version -------------------------------------------------------------------------------
    def version(self):
        """--version: the four version lines of recent drivers."""
        drv = self.prof["driver_version"]
        nvml = ".".join(drv.split(".")[:2])
        return ("NVIDIA-SMI version  : %s\nNVML version        : %s\nDRIVER version      : %s\nCUDA Version        : %s\n"
                % (drv, nvml, drv, self.prof["cuda_version"]))

    # -- -L ----------------------------------------------------------------------------------------
    def list_gpus(self, ids):
        """-L: one line per GPU with its UUID."""
        return "".join("GPU %d: %s (UUID: %s)\n" % (idx, gpu["name"], gpu["uuid"]) for idx, gpu in self.select(ids))

    # -- plain summary ---------------------------------------------------------------------------------
    def summary(self, ids):
        """Plain nvidia-smi: the 91-column summary table as drivers 580-595 print it."""
        drv = self.prof["driver_version"]
        lines = [self.now.strftime("%a %b %e %H:%M:%S %Y") + "       ", WIDE_RULE,
                 "| NVIDIA-SMI %-23sDriver Version: %-15sCUDA Version: %-9s|" % (drv, drv, self.prof["cuda_version"]),
                 TABLE_RULE,
                 "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
                 "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
                 "|                                         |                        |               MIG M. |",
                 "|=========================================+========================+======================|"]
        for idx, gpu in self.select(ids):
            name = gpu["name"] if len(gpu["name"]) <= 27 else gpu["name"][:24] + "..."
            pers = "On" if _persistence(gpu, self.state) == "Enabled" else "Off"
            disp = "On" if gpu.get("display_active") == "On" else "Off"
            lines.append("|%4d  %-31s%-3s |   %s %3s |%21s |" % (idx, name, pers, gpu["pci_bus_id"], disp, gpu.get("ecc", "N/A")))
            used = gpu.get("memory_used_mib", 0)
            lines.append("| %3s   %2dC    %-2s%15dW / %4dW |%8dMiB / %6dMiB |%8s%13s |" % (
                gpu.get("fan_speed", "N/A"), gpu.get("temperature_c", 30), gpu.get("pstate", "P0"),
                round(gpu.get("power_draw_w", 0)), round(gpu["power_limit_w"]), used, gpu["memory_total_mib"],
                "%d%%" % gpu.get("utilization_gpu", 0), gpu.get("compute_mode", "Default")))
            lines.append("|                                         |                        |%21s |" % gpu.get("mig_mode", "N/A"))
            lines.append(TABLE_RULE)
        lines += ["", WIDE_RULE,
                  "| Processes:" + " " * 78 + "|",
                  "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
                  "|        ID   ID                                                               Usage      |",
                  "|" + "=" * 89 + "|",
                  "|  No running processes found" + " " * 61 + "|",
                  WIDE_RULE]
        return "\n".join(lines) + "\n"

    # -- -q [-d MEMORY] --------------------------------------------------------------------------
    def query(self, ids, display):
        """-q [-d MEMORY|PCI]: the NVSMI LOG report; key column 42 wide before driver 590, 55 after."""
        width = 55 if _major(self.prof["driver_version"]) >= 590 else 42

        def kv(indent, key, value):
            return (" " * indent + key).ljust(width) + ": " + str(value)

        sections = [s.strip().upper() for s in display.split(",")] if display else ["ALL"]
        unknown = [s for s in sections if s not in ("ALL", "MEMORY", "PCI")]
        if unknown:
            raise StandinError("%s is not a valid display type. Please run 'nvidia-smi -h'.\n" % unknown[0].lower(), RC_INVALID_ARG)
        selected = self.select(ids)
        out = ["", "==============NVSMI LOG==============", "",
               kv(0, "Timestamp", self.now.strftime("%a %b %e %H:%M:%S %Y")),
               kv(0, "Driver Version", self.prof["driver_version"]),
               kv(0, "CUDA Version", self.prof["cuda_version"]), "",
               kv(0, "Attached GPUs", len(self.gpus))]
        full = "ALL" in sections
        for idx, gpu in selected:
            out.append("GPU " + gpu["pci_bus_id"])
            if full:
                out += [kv(4, "Product Name", gpu["name"]),
                        kv(4, "Persistence Mode", _persistence(gpu, self.state)),
                        kv(4, "GPU UUID", gpu["uuid"]),
                        kv(4, "Minor Number", idx),
                        kv(4, "VBIOS Version", gpu.get("vbios_version", "N/A"))]
            if full or "PCI" in sections:
                dom, bus, devfn = gpu["pci_bus_id"].split(":")
                out += ["    PCI",
                        kv(8, "Bus", "0x" + bus),
                        kv(8, "Device", "0x" + devfn.split(".")[0]),
                        kv(8, "Domain", "0x" + dom[-4:]),
                        kv(8, "Bus Id", gpu["pci_bus_id"]),
                        "        GPU Link Info",
                        "            PCIe Generation",
                        kv(16, "Max", gpu["pcie_gen_max"]),
                        kv(16, "Current", gpu["pcie_gen_current"]),
                        kv(16, "Device Current", gpu["pcie_gen_current"]),
                        kv(16, "Device Max", gpu["pcie_gen_max"]),
                        kv(16, "Host Max", gpu["pcie_gen_max"]),
                        "            Link Width",
                        kv(16, "Max", "%dx" % gpu["pcie_width_max"]),
                        kv(16, "Current", "%dx" % gpu["pcie_width_current"])]
            if full or "MEMORY" in sections:
                total = gpu["memory_total_mib"]
                reserved = gpu.get("memory_reserved_mib", 0)
                used = gpu.get("memory_used_mib", 0)
                bar1 = gpu["bar1_total_mib"]
                bar1_used = gpu.get("bar1_used_mib", 1)
                out += ["    FB Memory Usage",
                        kv(8, "Total", "%d MiB" % total),
                        kv(8, "Reserved", "%d MiB" % reserved),
                        kv(8, "Used", "%d MiB" % used),
                        kv(8, "Free", "%d MiB" % _fb_free(gpu)),
                        "    BAR1 Memory Usage",
                        kv(8, "Total", "%d MiB" % bar1),
                        kv(8, "Used", "%d MiB" % bar1_used),
                        kv(8, "Free", "%d MiB" % (bar1 - bar1_used)),
                        "    Conf Compute Protected Memory Usage",
                        kv(8, "Total", "0 MiB"),
                        kv(8, "Used", "0 MiB"),
                        kv(8, "Free", "0 MiB")]
            if full:
                out += ["    GPU Power Readings",
                        kv(8, "Current Power Limit", "%s W" % _fmt_w(gpu["power_limit_w"]))]
            out.append("")
        return "\n".join(out) + "\n"

    # -- --query-gpu ---------------------------------------------------------------------------------
    def query_gpu(self, fields_arg, fmt, ids):
        """--query-gpu with --format=csv[,noheader][,nounits]."""
        table = _field_table()
        fields = [f.strip() for f in fields_arg.split(",") if f.strip()]
        canon = []
        for field in fields:
            name = FIELD_ALIASES.get(field, field)
            if name not in table:
                raise StandinError('Field "%s" is not a valid field to query.\n\n' % field, RC_INVALID_ARG)
            canon.append(name)
        opts = [o.strip() for o in fmt.split(",")]
        if not opts or opts[0] != "csv" or any(o not in ("csv", "noheader", "nounits") for o in opts):
            raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
        lines = []
        if "noheader" not in opts:
            lines.append(", ".join(n + (" [%s]" % table[n][0] if table[n][0] else "") for n in canon))
        for idx, gpu in self.select(ids):
            cells = []
            for name in canon:
                unit, getter = table[name]
                value = str(getter(self.prof, idx, gpu, self.state))
                if unit and "nounits" not in opts and not value.startswith("["):
                    value = "%s %s" % (value, unit)
                cells.append(value)
            lines.append(", ".join(cells))
        return "\n".join(lines) + "\n"

    # -- topo -m -------------------------------------------------------------------------------------
    def link(self, i, j):
        """Link class of a GPU pair as topo -m prints it."""
        if i == j:
            return " X "
        key = "%d-%d" % (min(i, j), max(i, j))
        return self.prof.get("links", {}).get(key, "SYS")

    def topo_matrix(self):
        """topo -m: tab-separated matrix, affinity columns, legends."""
        nics = self.prof.get("nics", [])
        n = len(self.gpus)
        cols = ["GPU%d" % i for i in range(n)] + ["NIC%d" % k for k in range(len(nics))]
        head = "\t".join(cols + ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])
        if self.prof.get("topo_header_ansi", True):
            head = "\x1b[4m" + head + "\x1b[0m"
        lines = ["\t" + head]
        for i, gpu in enumerate(self.gpus):
            cells = [self.link(i, j) for j in range(n)] + [nic["gpu_links"][i] for nic in nics]
            lines.append("GPU%d\t%s\t%s\t%s\t\t%s" % (i, "\t".join(cells), gpu.get("cpu_affinity", "N/A"),
                                                      gpu.get("numa_affinity", "N/A"), gpu.get("gpu_numa_id", "N/A")))
        for k, nic in enumerate(nics):
            cells = list(nic["gpu_links"]) + [" X " if m == k else nic["nic_links"].get(str(m), "SYS") for m in range(len(nics))]
            lines.append("NIC%d\t%s\t\t\t\t" % (k, "\t".join(cells)))
        text = "\n".join(lines) + "\n" + TOPO_LEGEND
        if nics:
            text += "\nNIC Legend:\n\n" + "".join("  NIC%d: %s\n" % (k, nic["name"]) for k, nic in enumerate(nics))
        return text + "\n"

    # -- topo -p2p <cap> ---------------------------------------------------------------------------
    def topo_p2p(self, cap):
        """topo -p2p <cap>: the driver's P2P verdict matrix and legend."""
        table = self.prof.get("p2p", {}).get(cap, {})
        n = len(self.gpus)
        lines = [" \t" + "".join("GPU%d\t" % i for i in range(n))]
        for i in range(n):
            cells = []
            for j in range(n):
                cells.append("X" if i == j else table.get("%d-%d" % (min(i, j), max(i, j)), "NS"))
            lines.append(" GPU%d\t%s\t" % (i, "\t".join(cells)))
        return "\n".join(lines) + "\n" + P2P_LEGEND

    # -- -pm -------------------------------------------------------------------------------------------
    def persistence(self, value, ids):
        """-pm 0|1: needs root, remembered in the state file."""
        wanted = {"1": "Enabled", "enabled": "Enabled", "0": "Disabled", "disabled": "Disabled"}.get(value.lower())
        if wanted is None:
            raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
        selected = self.select(ids)
        forced = self.environ.get("NVIDIA_SMI_STANDIN_ROOT")
        is_root = forced == "1" if forced in ("0", "1") else os.geteuid() == 0
        out = []
        for _idx, gpu in selected:
            if not is_root:
                out.append("Unable to set persistence mode for GPU %s: Insufficient Permissions" % gpu["pci_bus_id"])
                out.append("Terminating early due to previous errors.")
                raise StandinError("\n".join(out) + "\n", RC_NO_PERMISSION)
            if _persistence(gpu, self.state) == wanted:
                out.append("Persistence mode is already %s for GPU %s." % (wanted, gpu["pci_bus_id"]))
            else:
                self.state.setdefault("persistence", {})[gpu["uuid"]] = wanted
                out.append("%s persistence mode for GPU %s." % (wanted, gpu["pci_bus_id"]))
        save_state(self.environ, self.state)
        out.append("All done.")
        return "\n".join(out) + "\n"


def _split_opt(args, i):
    """Return (name, inline value or None) for args[i]: '--id=0' -> ('--id', '0')."""
    arg = args[i]
    if arg.startswith("--") and "=" in arg:
        name, value = arg.split("=", 1)
        return name, value
    return arg, None


def _take_value(args, i, inline):
    if inline is not None:
        return inline, i + 1
    if i + 1 >= len(args):
        raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
    return args[i + 1], i + 2


def parse_args(args):
    """Parse the subset of nvidia-smi's command line the stand-in answers; unknown options fail like the real tool."""
    opts = {"action": "summary", "id": None, "display": None, "query_gpu": None, "format": None,
            "topo": None, "p2p": None, "pm": None}
    i = 0
    if args and args[0] == "topo":
        if len(args) >= 2 and args[1] in ("-m", "--matrix"):
            opts["action"] = "topo_m"
            return opts
        if len(args) >= 3 and args[1] in ("-p2p", "--p2pstatus") and args[2] in P2P_CAPS:
            opts["action"] = "topo_p2p"
            opts["p2p"] = P2P_CAPS[args[2]]
            return opts
        raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
    if args and args[0] in ("nvlink", "mig", "drain", "vgpu", "conf-compute", "dmon", "pmon", "clocks", "c2c"):
        raise StandinError("nvidia-smi stand-in: '%s' is a real subcommand that this test stand-in does not emulate.\n" % args[0],
                           RC_NOT_SUPPORTED)
    while i < len(args):
        name, inline = _split_opt(args, i)
        if name in ("-h", "--help"):
            opts["action"] = "help"
            i += 1
        elif name == "--version":
            opts["action"] = "version"
            i += 1
        elif name in ("-L", "--list-gpus"):
            opts["action"] = "list"
            i += 1
        elif name in ("-q", "--query"):
            opts["action"] = "query"
            i += 1
        elif name in ("-d", "--display"):
            opts["display"], i = _take_value(args, i, inline)
        elif name in ("-i", "--id"):
            opts["id"], i = _take_value(args, i, inline)
        elif name == "--query-gpu":
            opts["action"] = "query_gpu"
            opts["query_gpu"], i = _take_value(args, i, inline)
        elif name == "--format":
            opts["format"], i = _take_value(args, i, inline)
        elif name in ("-pm", "--persistence-mode"):
            opts["action"] = "pm"
            opts["pm"], i = _take_value(args, i, inline)
        else:
            raise StandinError("ERROR: Option %s is not recognized. Please run 'nvidia-smi -h' for help.\n" % args[i], RC_INVALID_ARG)
    if opts["action"] == "query_gpu" and not opts["format"]:
        raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
    if opts["format"] and opts["action"] != "query_gpu":
        raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
    if opts["display"] and opts["action"] != "query":
        raise StandinError("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", RC_INVALID_ARG)
    return opts


HELP = """NVIDIA System Management Interface -- test stand-in (not the real tool)

Answers: nvidia-smi, --version, -L, -q [-d MEMORY|PCI], --query-gpu=... --format=csv[,noheader][,nounits],
topo -m, topo -p2p r|w|n|a|p, -pm 0|1, -i <id>. Profile: $NVIDIA_SMI_STANDIN_PROFILE or
/etc/nvidia-smi-standin/profile.json.
"""


def run(args, environ):
    """Return (stdout text, exit code) for one invocation."""
    try:
        opts = parse_args(args)
    except StandinError as exc:
        return exc.message, exc.rc
    if opts["action"] == "help":
        return HELP, RC_OK
    path = resolve_profile_path(environ)
    if path is None:
        return NO_DRIVER_MSG, RC_NO_DRIVER
    try:
        with open(path, encoding="utf-8") as handle:
            profile = json.load(handle)
    except (OSError, ValueError) as exc:
        return "nvidia-smi stand-in: cannot read profile %s: %s\n" % (path, exc), 255
    smi = Smi(profile, load_state(environ), environ)
    if opts["action"] == "version":
        return smi.version(), RC_OK
    if not smi.gpus:
        return "No devices were found\n", RC_NOT_FOUND
    try:
        if opts["action"] == "list":
            return smi.list_gpus(opts["id"]), RC_OK
        if opts["action"] == "query":
            return smi.query(opts["id"], opts["display"]), RC_OK
        if opts["action"] == "query_gpu":
            return smi.query_gpu(opts["query_gpu"], opts["format"], opts["id"]), RC_OK
        if opts["action"] == "topo_m":
            return smi.topo_matrix(), RC_OK
        if opts["action"] == "topo_p2p":
            return smi.topo_p2p(opts["p2p"]), RC_OK
        if opts["action"] == "pm":
            return smi.persistence(opts["pm"], opts["id"]), RC_OK
        return smi.summary(opts["id"]), RC_OK
    except StandinError as exc:
        return exc.message, exc.rc


def main():
    """Program entry: print and exit with the real tool's exit code."""
    text, rc = run(sys.argv[1:], os.environ)
    sys.stdout.write(text)
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
