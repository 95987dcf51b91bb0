# -*- coding: utf-8 -*-
"""gpu_facts: the nvidia-smi text path driven by the stand-in, the NVML path with a fake library, no GPU.

run_command is patched so nvidia-smi calls run the stand-in script (tools/standins/nvidia_smi) as a
subprocess with a chosen profile, and lspci calls return real lspci text from data/gpu. Host files
(/proc/cmdline, /proc/cpuinfo, /sys/class/iommu) are pointed at a temporary directory.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.topology import split_pair
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import decide_nccl_policy
from ansible_collections.gpufleet.sglang.plugins.modules import gpu_facts
from ansible_collections.gpufleet.sglang.plugins.modules.gpu_facts import GpuFacts, build_module

ROOT = Path(__file__).resolve().parents[4]
STANDIN = ROOT / "tools" / "standins" / "nvidia_smi" / "nvidia_smi_standin.py"
PROFILES = ROOT / "tools" / "standins" / "nvidia_smi" / "profiles"
DATA = ROOT / "tests" / "unit" / "plugins" / "module_utils" / "data" / "gpu"
SMI = "/usr/bin/nvidia-smi"
LSPCI = "/usr/bin/lspci"


class Host:
    """The fake host: which binaries exist, what the stand-in profile is, what lspci prints; records calls."""

    def __init__(self, tmp_path, profile="a6000x2-pcie-phb", lspci="lspci_vv_bridge_acs_off.txt", smi=True):
        self.tmp = tmp_path
        self.profile = str(PROFILES / (profile + ".json")) if profile else str(tmp_path / "no-profile.json")
        self.lspci = lspci
        self.smi = smi
        self.calls = []

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        if arg == "nvidia-smi":
            return SMI if self.smi else None
        if arg == "lspci":
            return LSPCI if self.lspci else None
        return None

    def run_command(self, args, **kwargs):
        self.calls.append(list(args))
        if args[0] == SMI:
            env = dict(os.environ, NVIDIA_SMI_STANDIN_PROFILE=self.profile, NVIDIA_SMI_STANDIN_STATE=str(self.tmp / "state.json"))
            done = subprocess.run([sys.executable, str(STANDIN)] + list(args[1:]), env=env, capture_output=True, text=True, check=False)
            return done.returncode, done.stdout, done.stderr
        if args[0] == LSPCI:
            return 0, (DATA / self.lspci).read_text(), ""
        raise AssertionError("unexpected command %r" % (args,))


@pytest.fixture
def host_files(tmp_path, monkeypatch):
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/vmlinuz-6.1.0-28-amd64 root=UUID=0b7e ro quiet amd_iommu=on iommu=pt\n")
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n")
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "iommu").mkdir()
    (tmp_path / "class" / "iommu" / "ivhd0").mkdir()
    monkeypatch.setattr(GpuFacts, "proc_cmdline", str(tmp_path / "cmdline"))
    monkeypatch.setattr(GpuFacts, "proc_cpuinfo", str(tmp_path / "cpuinfo"))
    monkeypatch.setattr(GpuFacts, "sys_iommu", str(tmp_path / "class" / "iommu"))
    monkeypatch.setattr(GpuFacts, "sys_pci_devices", str(tmp_path / "pci"))
    monkeypatch.setattr(GpuFacts, "nvswitch_globs", (str(tmp_path / "dev" / "nvidia-nvswitch[0-9]*"),))
    return tmp_path


def run_module(monkeypatch, host, args=None, nvml=None):
    monkeypatch.setattr(basic.AnsibleModule, "run_command", host.run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", host.get_bin_path)
    with patch_module_args(args or {}):
        module = build_module()
    facts = GpuFacts(module, nvml_loader=lambda: nvml)
    facts.collect()
    return facts.result


HOST_FACTS = {
    "iommu": {"mode": "passthrough", "explicit": True, "active": True, "units": ["ivhd0"], "cmdline_args": ["amd_iommu=on", "iommu=pt"]},
    "acs": {"checked": 1, "redirecting": [], "enabled": False},
    "cpu_vendor": "amd",
}


def a6000_gpu(index, uuid, bus):
    return {"index": index, "name": "NVIDIA RTX A6000", "uuid": uuid, "memory_total_mib": 49140, "pci_bus_id": bus,
            "pcie_gen_current": 4, "pcie_gen_max": 4, "pcie_width_current": 16, "pcie_width_max": 16, "numa_node": 0,
            "cpu_affinity": "0-31", "bar1_total_mib": 65536, "compute_cap": "8.6", "persistence_mode": "Disabled",
            "power_limit_w": 300.0}


A6000_FACTS = dict({
    "gpu_count": 2,
    "gpus": [a6000_gpu(0, "GPU-3b8a5c1e-7d2f-4e11-9a60-0c2f8d4b6a01", "00000000:01:00.0"),
             a6000_gpu(1, "GPU-9e41d7b0-25c3-4f8a-b1d6-5a7c03e2f902", "00000000:21:00.0")],
    "links": {"0-1": "PHB"},
    "p2p_read": {"0-1": "OK"},
    "driver_version": "580.105.08",
    "cuda_version": "13.0",
    "nvlink_full_mesh": False,
    "nvswitch": False,
    "source": "nvidia-smi",
    "notes": [],
}, **HOST_FACTS)


def test_text_path_on_the_story_box_returns_the_whole_result(monkeypatch, host_files):
    host = Host(host_files)
    result = run_module(monkeypatch, host, {"backend": "nvidia-smi"})
    assert result == dict(A6000_FACTS, changed=False, ansible_facts={"gpu_facts": A6000_FACTS})
    assert [c[1:] for c in host.calls] == [
        ["--query-gpu=index,name,uuid,memory.total,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
         "pcie.link.width.max,driver_version,persistence_mode,power.limit,compute_cap", "--format=csv,noheader,nounits"],
        ["topo", "-m"], ["topo", "-p2p", "r"], ["-q", "-d", "MEMORY"], ["-vvv"]]


def test_auto_falls_back_to_nvidia_smi_when_nvml_does_not_load(monkeypatch, host_files):
    result = run_module(monkeypatch, Host(host_files))
    assert result["source"] == "nvidia-smi"
    assert result["notes"] == ["libnvidia-ml.so.1 not loadable: NVML not used"]
    assert {k: v for k, v in result.items() if k not in ("notes", "ansible_facts", "changed")} == \
        {k: v for k, v in A6000_FACTS.items() if k != "notes"}


def test_geforce_profile_small_bar1_and_x8_slot(monkeypatch, host_files):
    result = run_module(monkeypatch, Host(host_files, profile="rtx4090x2-pcie-nop2p"), {"backend": "nvidia-smi"})
    assert result["p2p_read"] == {"0-1": "NS"}
    assert [(g["bar1_total_mib"], g["pcie_width_current"], g["pcie_width_max"]) for g in result["gpus"]] == [(256, 16, 16), (256, 8, 16)]
    policy = decide_nccl_policy(result)
    assert policy["env"] == {"NCCL_P2P_DISABLE": "1"} and policy["server_args"] == {"disable_custom_all_reduce": True}


def test_nvswitch_profile(monkeypatch, host_files):
    result = run_module(monkeypatch, Host(host_files, profile="h100x8-nvswitch", lspci=None), {"backend": "nvidia-smi"})
    assert result["gpu_count"] == 8 and set(result["links"].values()) == {"NV18"}
    assert result["nvlink_full_mesh"] is True and result["nvswitch"] is True
    assert [g["numa_node"] for g in result["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert result["gpus"][7]["cpu_affinity"] == "48-95,144-191"
    assert result["acs"] is None and "lspci not installed: ACS not checked" in result["notes"]
    assert decide_nccl_policy(result, tp_size=8)["requirements"] == ["nvidia-fabricmanager 580.105.08 running"]


def test_cross_socket_profile_feeds_r5(monkeypatch, host_files):
    result = run_module(monkeypatch, Host(host_files, profile="l40sx4-pcie-sys", lspci="lspci_acsctl_grep_tabs.txt"))
    assert result["links"]["0-2"] == "SYS" and result["links"]["2-3"] == "NODE"
    assert result["acs"]["enabled"] is True and len(result["acs"]["redirecting"]) == 5
    policy = decide_nccl_policy(result, tp_gpus=[1, 2])
    assert policy["suggested_cuda_visible_devices"] == "0,1"


@pytest.mark.parametrize("profile, smi, note", [
    (None, True, "nvidia-smi: no NVIDIA driver loaded (rc 9)"),
    ("nodevices", True, "nvidia-smi: no devices were found"),
    ("a6000x2-pcie-phb", False, "nvidia-smi not found: no NVIDIA driver installed"),
])
def test_host_without_gpu_is_not_a_failure(monkeypatch, host_files, profile, smi, note):
    result = run_module(monkeypatch, Host(host_files, profile=profile, smi=smi), {"backend": "nvidia-smi"})
    expected = dict(GpuFacts.empty(), notes=[note], **HOST_FACTS)
    assert result == dict(expected, changed=False, ansible_facts={"gpu_facts": expected})
    assert decide_nccl_policy(result)["env"] == {}


def test_check_acs_false_skips_lspci(monkeypatch, host_files):
    host = Host(host_files)
    result = run_module(monkeypatch, host, {"backend": "nvidia-smi", "check_acs": False})
    assert result["acs"] is None and ["-vvv"] not in [c[1:] for c in host.calls]


def test_main_exits_with_facts(monkeypatch, host_files, capsys):
    host = Host(host_files)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", host.run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", host.get_bin_path)
    monkeypatch.setattr(gpu_facts, "load_nvml", lambda: None)
    with patch_module_args({"_ansible_check_mode": True}):
        with pytest.raises(SystemExit) as exc:
            gpu_facts.main()
    assert exc.value.code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["changed"] is False and out["ansible_facts"]["gpu_facts"]["links"] == {"0-1": "PHB"}


# --- the NVML path with a fake library --------------------------------------------------------------------

LEVELS = {"PIX": 10, "PXB": 20, "PHB": 30, "NODE": 40, "SYS": 50}
P2P_CODES = {"OK": 0, "CNS": 1, "GNS": 2, "TNS": 3, "DR": 4, "NS": 5, "U": 6}


def _mask(ranges):
    words = [0] * 4
    for part in ranges.split(","):
        lo, _sep, hi = part.partition("-")
        for cpu in range(int(lo), int(hi or lo) + 1):
            words[cpu // 64] |= 1 << (cpu % 64)
    return words


class FakeNvml:
    """Answers the NVML calls gpu_facts makes from a stand-in profile, writing through ctypes byref like libnvidia-ml."""

    def __init__(self, profile, init_rc=0):
        self.prof = json.loads((PROFILES / (profile + ".json")).read_text())
        self.gpus = self.prof["gpus"]
        self.init_rc = init_rc
        self.calls = []
        self.switched = self.prof.get("hints", {}).get("nvswitch", False)

    def _h(self, handle):
        return handle.value - 1

    def nvmlInit_v2(self):
        self.calls.append("init")
        return self.init_rc

    def nvmlShutdown(self):
        self.calls.append("shutdown")
        return 0

    def nvmlSystemGetDriverVersion(self, buf, size):
        buf.value = self.prof["driver_version"].encode()
        return 0

    def nvmlSystemGetCudaDriverVersion_v2(self, ref):
        major, minor = self.prof["cuda_version"].split(".")
        ref._obj.value = int(major) * 1000 + int(minor) * 10
        return 0

    def nvmlDeviceGetCount_v2(self, ref):
        ref._obj.value = len(self.gpus)
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, idx, ref):
        ref._obj.value = idx + 1
        return 0

    def nvmlDeviceGetName(self, handle, buf, size):
        buf.value = self.gpus[self._h(handle)]["name"].encode()
        return 0

    def nvmlDeviceGetUUID(self, handle, buf, size):
        buf.value = self.gpus[self._h(handle)]["uuid"].encode()
        return 0

    def nvmlDeviceGetMemoryInfo(self, handle, ref):
        ref._obj.total = self.gpus[self._h(handle)]["memory_total_mib"] * 1024 * 1024
        return 0

    def nvmlDeviceGetBAR1MemoryInfo(self, handle, ref):
        ref._obj.bar1Total = self.gpus[self._h(handle)]["bar1_total_mib"] * 1024 * 1024
        return 0

    def nvmlDeviceGetPciInfo_v3(self, handle, ref):
        ref._obj.busId = self.gpus[self._h(handle)]["pci_bus_id"].encode()
        return 0

    def _uint(self, key):
        def get(handle, ref):
            ref._obj.value = self.gpus[self._h(handle)][key]
            return 0
        return get

    @property
    def nvmlDeviceGetCurrPcieLinkGeneration(self):
        return self._uint("pcie_gen_current")

    @property
    def nvmlDeviceGetMaxPcieLinkGeneration(self):
        return self._uint("pcie_gen_max")

    @property
    def nvmlDeviceGetCurrPcieLinkWidth(self):
        return self._uint("pcie_width_current")

    @property
    def nvmlDeviceGetMaxPcieLinkWidth(self):
        return self._uint("pcie_width_max")

    def nvmlDeviceGetNumaNodeId(self, handle, ref):
        ref._obj.value = int(self.gpus[self._h(handle)]["numa_affinity"])
        return 0

    def nvmlDeviceGetCpuAffinity(self, handle, size, array):
        for i, word in enumerate(_mask(self.gpus[self._h(handle)]["cpu_affinity"])[:size]):
            array[i] = word
        return 0

    def nvmlDeviceGetCudaComputeCapability(self, handle, major, minor):
        major._obj.value, minor._obj.value = (int(x) for x in self.gpus[self._h(handle)]["compute_cap"].split("."))
        return 0

    def nvmlDeviceGetPersistenceMode(self, handle, ref):
        ref._obj.value = 1 if self.gpus[self._h(handle)]["persistence_mode"] == "Enabled" else 0
        return 0

    def nvmlDeviceGetEnforcedPowerLimit(self, handle, ref):
        ref._obj.value = int(self.gpus[self._h(handle)]["power_limit_w"] * 1000)
        return 0

    def _nvlinks(self, idx):
        """Remote of each active link: 'switch' on NVSwitch boards, else peer GPU indices (one per link)."""
        if self.switched:
            return ["switch"] * 18
        remotes = []
        for key, link in self.prof["links"].items():
            i, j = split_pair(key)
            if link.startswith("NV") and idx in (i, j):
                remotes += [j if idx == i else i] * int(link[2:])
        return remotes

    def nvmlDeviceGetNvLinkState(self, handle, link, ref):
        remotes = self._nvlinks(self._h(handle))
        if link >= len(remotes):
            return 3  # NVML_ERROR_NOT_SUPPORTED
        ref._obj.value = 1
        return 0

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, handle, link, ref):
        ref._obj.value = 2 if self._nvlinks(self._h(handle))[link] == "switch" else 0
        return 0

    def nvmlDeviceGetNvLinkRemotePciInfo_v2(self, handle, link, ref):
        ref._obj.busId = self.gpus[self._nvlinks(self._h(handle))[link]]["pci_bus_id"].encode()
        return 0

    def nvmlDeviceGetTopologyCommonAncestor(self, h1, h2, ref):
        key = "%d-%d" % tuple(sorted((self._h(h1), self._h(h2))))
        ref._obj.value = LEVELS[self.prof["links"][key]]
        return 0

    def nvmlDeviceGetP2PStatus(self, h1, h2, index, ref):
        assert index == 0
        key = "%d-%d" % tuple(sorted((self._h(h1), self._h(h2))))
        ref._obj.value = P2P_CODES[self.prof["p2p"]["r"].get(key, "NS")]
        return 0


@pytest.mark.parametrize("profile", ["a6000x2-pcie-phb", "rtx4090x2-pcie-nop2p", "h100x8-nvswitch", "l40sx4-pcie-sys"])
def test_nvml_and_nvidia_smi_paths_agree(monkeypatch, host_files, profile):
    nvml = FakeNvml(profile)
    from_nvml = run_module(monkeypatch, Host(host_files, profile=profile), {"backend": "nvml"}, nvml=nvml)
    from_text = run_module(monkeypatch, Host(host_files, profile=profile), {"backend": "nvidia-smi"})
    assert nvml.calls == ["init", "shutdown"]
    assert from_nvml["source"] == "nvml" and from_text["source"] == "nvidia-smi"
    for key in ("gpu_count", "gpus", "links", "p2p_read", "driver_version", "cuda_version", "nvlink_full_mesh", "nvswitch"):
        assert from_nvml[key] == from_text[key], key


def test_nvml_whole_result_on_the_story_box(monkeypatch, host_files):
    result = run_module(monkeypatch, Host(host_files), nvml=FakeNvml("a6000x2-pcie-phb"))
    expected = dict(A6000_FACTS, source="nvml")
    assert result == dict(expected, changed=False, ansible_facts={"gpu_facts": expected})


def test_nvml_direct_nvlink_pairs_are_counted_once(monkeypatch, host_files):
    prof = json.loads((PROFILES / "a6000x2-pcie-phb.json").read_text())
    prof["links"] = {"0-1": "NV4"}
    nvml = FakeNvml("a6000x2-pcie-phb")
    nvml.prof = prof
    result = run_module(monkeypatch, Host(host_files), {"backend": "nvml"}, nvml=nvml)
    assert result["links"] == {"0-1": "NV4"} and result["nvlink_full_mesh"] is True and result["nvswitch"] is False


def test_nvml_init_failure_falls_back_and_still_shuts_nothing_down(monkeypatch, host_files):
    nvml = FakeNvml("a6000x2-pcie-phb", init_rc=9)  # NVML_ERROR_DRIVER_NOT_LOADED
    result = run_module(monkeypatch, Host(host_files), nvml=nvml)
    assert nvml.calls == ["init"]
    assert result["source"] == "nvidia-smi"
    assert result["notes"][0] == "nvmlInit failed with NVML error 9"


def test_nvml_shutdown_even_when_collection_raises(monkeypatch, host_files):
    nvml = FakeNvml("a6000x2-pcie-phb")

    def broken(ref):
        raise RuntimeError("driver went away")

    nvml.nvmlDeviceGetCount_v2 = broken
    with pytest.raises(RuntimeError):
        run_module(monkeypatch, Host(host_files), {"backend": "nvml"}, nvml=nvml)
    assert nvml.calls == ["init", "shutdown"]


def test_nvml_sysfs_numa_fallback(monkeypatch, host_files):
    nvml = FakeNvml("a6000x2-pcie-phb")
    nvml.nvmlDeviceGetNumaNodeId = None  # an older NVML without the call: gpu_facts treats it as missing
    node = host_files / "pci" / "0000:21:00.0"
    node.mkdir(parents=True)
    (node / "numa_node").write_text("1\n")
    result = run_module(monkeypatch, Host(host_files), {"backend": "nvml"}, nvml=nvml)
    assert [g["numa_node"] for g in result["gpus"]] == [None, 1]


def test_load_nvml_returns_none_without_library(monkeypatch):
    def missing(name):
        raise OSError("libnvidia-ml.so.1: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert gpu_facts.load_nvml() is None
