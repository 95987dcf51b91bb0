# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu/nccl: what each rule says, word for word, the P2P reach table level by level, and the merge's messages.

test_nccl_policy.py holds the decisions on realistic hosts; this file pins the text an operator reads (every
``why``, warning, note and error), each threshold at its boundary, and each table entry (make mutation).
"""

from __future__ import annotations

import itertools

import pytest

from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu import nccl
from ansible_collections.gpufleet.sglang.plugins.module_utils.gpu.nccl import decide_nccl_policy, expected_transport

A6000 = {"name": "NVIDIA RTX A6000", "memory_total_mib": 49140, "bar1_total_mib": 65536}
TAIL = [("debug-knobs-opt-in", "no debugging knobs requested, none set"),
        ("env-in-unit-file", "write env to the SGLang unit's environment file, never host-wide")]
DISABLED = ": NCCL_P2P_DISABLE=1 and SGLang custom all-reduce off"
SEPARATE = ("Run these instances on separate hosts, or set gpu_tuning_tp_gpus to decide once for the GPUs of all of "
            "them (docs/gpu-host.md#several-instances-on-one-host)")


def facts(count, link, p2p="OK", numa=None, model=None, **extra):
    """GPU facts as gpu_facts returns them; ``link``/``p2p`` one value for every pair or a pair -> value map."""
    model = model or A6000
    pairs = ["%d-%d" % (i, j) for i, j in itertools.combinations(range(count), 2)]
    out = {"gpu_count": count,
           "gpus": [dict(model, index=i, numa_node=(numa[i] if numa else 0)) for i in range(count)],
           "links": link if isinstance(link, dict) else {k: link for k in pairs},
           "p2p_read": p2p if isinstance(p2p, dict) else {k: p2p for k in pairs},
           "driver_version": "580.105.08", "nvswitch": False, "iommu": {"mode": "passthrough"},
           "acs": {"enabled": False, "redirecting": []}, "cpu_vendor": "intel", "source": "nvml"}
    out.update(extra)
    return out


def whys(policy):
    """(rule, why) of every rule that fired, in order."""
    return [(r["rule"], r["why"]) for r in policy["rules"]]


def test_the_rules_bases_and_tables():
    """Each rule's one-line basis, the debugging knobs, and NCCL's default P2P level, as the reference gives them."""
    ref = "docs/reference/nccl-over-pcie.md#"
    assert nccl.BASIS == {
        "nvlink-uses-p2p": ref + "nvlink-uses-p2p: NVLink pairs already use P2P; NVSwitch boards need "
                                 "nvidia-fabricmanager at the driver's version",
        "disable-p2p-when-unusable": ref + "disable-p2p-when-unusable: NCCL drops P2P when the driver status is not OK "
                                           "(src/graph/paths.cc); GeForce has no P2P (nccl-tests #287); SGLang custom "
                                           "all-reduce crashes without P2P (sglang #4814)",
        "pcie-switch-within-cutoff": ref + "pcie-switch-within-cutoff: PIX/PXB are within NCCL's default P2P cutoff "
                                           "(PXB since 2.23.4); ACS redirect breaks it (NCCL troubleshooting docs, "
                                           "nccl #199)",
        "host-bridge-needs-p2p-level": ref + "host-bridge-needs-p2p-level: since NCCL 2.23.4 the default cutoff is PXB, "
                                             "so PHB/NODE pairs need NCCL_P2P_LEVEL=PHB (src/graph/paths.cc)",
        "keep-tp-on-one-socket": ref + "keep-tp-on-one-socket: SYS crosses the socket interconnect (~10 GB/s vs "
                                       "~21-26 GB/s one socket, flashinfer #4870)",
        "iommu-acs-opt-in": ref + "iommu-acs-opt-in: iommu=pt and ACS off only on bare metal, by explicit opt-in, never "
                                  "on a hypervisor",
        "debug-knobs-opt-in": ref + "debug-knobs-opt-in: NCCL docs say debugging variables (NCCL_ALGO, NCCL_PROTO, ...) "
                                    "do not belong in production",
        "env-in-unit-file": ref + "env-in-unit-file: the environment goes into the SGLang unit's environment file, not "
                                  "/etc/nccl.conf",
    }
    assert nccl.DEBUG_KNOBS == (
        "NCCL_ALGO", "NCCL_PROTO", "NCCL_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE",
        "NCCL_NTHREADS", "NCCL_SHM_DISABLE", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL",
        "NCCL_IB_DISABLE", "NCCL_CUMEM_ENABLE", "NCCL_NVLS_ENABLE")
    assert (nccl.DEFAULT_P2P_LEVEL, nccl.FACTS, nccl.TP_GROUP) == ("PXB", "facts", "tp-group")


# ------------------------------------------------------------------------------------------ expected transport

LEVELS = ("LOC", "NVL", "PIX", "PXB", "PHB", "NODE", "SYS")


@pytest.mark.parametrize("link, reaches", [
    # The NCCL_P2P_LEVEL values (in LEVELS order) at which NCCL uses P2P over this path (src/graph/paths.cc).
    ("NV4", (False, True, True, True, True, True, True)),
    ("PIX", (False, False, True, True, True, True, True)),
    ("PXB", (False, False, False, True, True, True, True)),
    ("PHB", (False, False, False, False, True, True, True)),
    ("NODE", (False, False, False, False, True, True, True)),
    ("SYS", (False, False, False, False, False, False, True)),
    (None, (False, False, False, False, False, False, False)),
])
def test_p2p_reach_level_by_level(link, reaches):
    """A pair uses P2P when its path is within the level; NVLink at every level but LOC; an unknown path never."""
    got = tuple(expected_transport({"links": {"0-1": link}}, [0, 1], {"NCCL_P2P_LEVEL": level}) == "P2P"
                for level in LEVELS)
    assert got == reaches


def test_expected_transport_defaults_and_spellings():
    """Default level PXB, levels in any case, unknown levels as the default, P2P_DISABLE=1 (number or text)."""
    f = {"links": {"0-1": "PXB", "0-2": "PHB", "1-2": "PXB"}}
    assert expected_transport(f, [0, 1], {}) == "P2P"
    assert expected_transport(f, [0, 1, 2], {}) == "SHM"
    assert expected_transport(f, [0, 1, 2], {"NCCL_P2P_LEVEL": "phb"}) == "P2P"
    assert expected_transport(f, [0, 1, 2], {"NCCL_P2P_LEVEL": "FAST"}) == "SHM"
    assert expected_transport(f, [0, 1], {"NCCL_P2P_DISABLE": 1}) == "SHM"
    assert expected_transport(f, [0, 1], {"NCCL_P2P_DISABLE": "0"}) == "P2P"
    assert expected_transport(f, [0], {}) is None
    assert expected_transport({}, [0, 1], {}) == "SHM"


# ------------------------------------------------------------------------------------------ one group, word for word

def test_nvswitch_without_a_driver_version():
    """Full NVLink mesh: no variables; an NVSwitch board needs the fabric manager (named generically if unknown)."""
    policy = decide_nccl_policy(facts(4, "NV18", nvswitch=True, driver_version=None))
    assert whys(policy) == [("nvlink-uses-p2p", "every GPU pair in [0, 1, 2, 3] is NVLink (NV18): no P2P variables")] + TAIL
    assert policy["notes"] == ["NVSwitch board: nvidia-fabricmanager must run at driver version the installed driver, "
                               "or CUDA init fails"]
    assert policy["requirements"] == ["nvidia-fabricmanager the installed driver running"]
    assert (policy["env"], policy["expected_transport"]) == ({}, "P2P")


def test_nvlink_classes_are_listed_once_each():
    """A mesh of different NV# counts names each class once, sorted."""
    links = {"0-1": "NV4", "0-2": "NV12", "1-2": "NV4"}
    assert whys(decide_nccl_policy(facts(3, links)))[0] == (
        "nvlink-uses-p2p", "every GPU pair in [0, 1, 2] is NVLink (NV12, NV4): no P2P variables")


def test_every_reason_to_disable_p2p_in_one_sentence():
    """Bad driver verdicts, each small BAR1 and mixed models are all named, in that order."""
    f = facts(3, "PHB", p2p={"0-1": "NS", "0-2": "CNS", "1-2": "OK"})
    f["gpus"][0]["bar1_total_mib"] = 256
    f["gpus"][1].update(bar1_total_mib=256, memory_total_mib=24565)
    f["gpus"][2]["name"] = "NVIDIA L40S"
    policy = decide_nccl_policy(f)
    assert whys(policy) == [("disable-p2p-when-unusable",
                             "driver P2P status not OK for 0-1=NS, 0-2=CNS; GPU0 BAR1 256 MiB < VRAM/2 (24570 MiB); "
                             "GPU1 BAR1 256 MiB < VRAM/2 (12282 MiB); different GPU models in one group "
                             "(NVIDIA L40S, NVIDIA RTX A6000): P2P never works between them" + DISABLED)] + TAIL
    assert (policy["env"], policy["server_args"]) == ({"NCCL_P2P_DISABLE": "1"}, {"disable_custom_all_reduce": True})


@pytest.mark.parametrize("bar1, small", [(24570, False), (24569, True), (16380, True)])
def test_bar1_exactly_half_of_vram_is_enough(bar1, small):
    """BAR1 must be at least half of VRAM: exactly half passes, one MiB less does not."""
    f = facts(2, "PIX")
    f["gpus"][1].update(bar1_total_mib=bar1, memory_total_mib=49140)
    first = whys(decide_nccl_policy(f))[0]
    if small:
        assert first == ("disable-p2p-when-unusable", "GPU1 BAR1 %d MiB < VRAM/2 (24570 MiB)" % bar1 + DISABLED)
    else:
        assert first[0] == "pcie-switch-within-cutoff"


def test_geforce_without_a_driver_verdict():
    """GeForce cards and no topo -p2p answer: stock drivers grant no P2P."""
    g = facts(2, "PIX", p2p={}, model={"name": "NVIDIA GeForce RTX 4090", "memory_total_mib": 24564,
                                       "bar1_total_mib": 32768})
    assert whys(decide_nccl_policy(g)) == [("disable-p2p-when-unusable", "GeForce GPUs [0, 1] and no driver P2P "
                                            "status: stock drivers grant no P2P" + DISABLED)] + TAIL


def test_acs_and_iommu_problems_on_switch_and_bridge_pairs():
    """Both problems in one warning, unnamed bridges said so, the switch rule and the opt-in remedy fired."""
    f = facts(3, {"0-1": "PXB", "0-2": "PHB", "1-2": "PHB"}, iommu={"mode": "translated"},
              acs={"enabled": True, "redirecting": [{"device": None}, {"device": "0000:00:01.1"}]})
    policy = decide_nccl_policy(f)
    warning = ("ACS redirect on 2 PCIe bridge(s) (unnamed bridge), 0000:00:01.1; IOMMU in translated DMA mode (no "
               "iommu=pt on the kernel command line): peer traffic goes through the root complex, slow or hanging at "
               "the first all-reduce even though topo -p2p says OK; measure an all-reduce, or set NCCL_P2P_DISABLE=1 "
               "via the explicit pass-through")
    assert policy["tagged_warnings"] == ["pcie-switch-within-cutoff: " + warning]
    assert policy["notes"] == ["TP=3 over PCIe: SGLang turns its custom all-reduce off by itself and uses NCCL"]
    assert whys(policy) == [
        ("pcie-switch-within-cutoff", "pairs ['0-1'] are PIX/PXB: NCCL's default already uses P2P there"),
        ("iommu-acs-opt-in", "remedy (iommu=pt, ACS off at boot) exists as an opt-in for bare metal only; never on a "
                             "hypervisor"),
        ("host-bridge-needs-p2p-level", "pairs ['0-2', '1-2'] are PHB/NODE with driver P2P OK: NCCL_P2P_LEVEL=PHB "
                                        "enables P2P over the host bridge")] + TAIL
    strict = decide_nccl_policy(f, strict_acs=True)
    assert (strict["tagged_errors"], strict["warnings"]) == (["pcie-switch-within-cutoff: " + warning], [])


@pytest.mark.parametrize("vendor, count, tp_size, amd_note", [
    ("amd", 2, None, True), ("amd", 3, 2, False), ("intel", 2, None, False)])
def test_host_bridge_on_amd_with_two_gpus(vendor, count, tp_size, amd_note):
    """The AMD remark appears only on an AMD host with at most two GPUs (NCCL's own default there)."""
    policy = decide_nccl_policy(facts(count, "NODE", acs=None, cpu_vendor=vendor), tp_size=tp_size)
    why = "pairs ['0-1'] are PHB/NODE with driver P2P OK: NCCL_P2P_LEVEL=PHB enables P2P over the host bridge"
    if amd_note:
        why += " (NCCL would already do so on this AMD host with <= 2 GPUs; set explicitly for clarity)"
    assert whys(policy) == [("host-bridge-needs-p2p-level", why + "; custom all-reduce stays on at TP=2")] + TAIL
    assert policy["notes"] == ["ACS state unknown (lspci missing or not run as root): not checked"]


def test_spread_group_with_a_same_socket_alternative():
    """The first same-socket set of the group's size is suggested, and the NUMA spread is listed by node."""
    links = {"0-1": "SYS", "0-2": "SYS", "0-3": "PHB", "1-2": "PHB", "1-3": "SYS", "2-3": "SYS"}
    policy = decide_nccl_policy(facts(4, links, numa=[1, 0, 0, 1]), tp_gpus=[0, 1])
    assert policy["warnings"] == ["TP group [0, 1] spans sockets (SYS pairs ['0-1']; NUMA 0: [1], NUMA 1: [0]): set "
                                  "CUDA_VISIBLE_DEVICES=0,3 to keep it on one NUMA node"]
    assert whys(policy) == [("keep-tp-on-one-socket", "pairs ['0-1'] cross the socket interconnect; GPUs [0, 3] share "
                                                      "one socket")] + TAIL
    assert policy["suggested_cuda_visible_devices"] == "0,3"


def test_spread_group_without_an_alternative():
    """No same-socket set: the expected bandwidth; a GPU without a NUMA node is shown as '?'."""
    policy = decide_nccl_policy(facts(2, "SYS", numa=[1, None]))
    assert policy["warnings"] == ["TP group [0, 1] spans sockets (SYS pairs ['0-1']; NUMA 1: [0], NUMA ?: [1]) and no "
                                  "2 GPUs share one socket: expect ~10 GB/s all-reduce"]
    assert whys(policy) == [("keep-tp-on-one-socket", "pairs ['0-1'] cross the socket interconnect and no same-socket "
                                                      "group of 2 exists")] + TAIL
    assert policy["suggested_cuda_visible_devices"] is None


def test_group_members_and_missing_facts():
    """A GPU index the host lacks (the first one past the end too), no GPU at all, and pairs with no class."""
    assert decide_nccl_policy(facts(2, "PHB"), tp_gpus=[2])["tagged_errors"] == [
        "facts: tp_gpus [2] not present on this host (it has GPUs 0-1)"]
    assert decide_nccl_policy(facts(2, "PHB"), tp_gpus=[-1, 1])["errors"] == [
        "tp_gpus [-1] not present on this host (it has GPUs 0-1)"]
    assert decide_nccl_policy({"source": "nvidia-smi"})["notes"] == [
        "no NVIDIA GPU found (source: nvidia-smi): no NCCL environment needed"]
    empty = decide_nccl_policy({})
    assert (empty["notes"], empty["tp_gpus"]) == (["no NVIDIA GPU found (source: none): no NCCL environment needed"], [])
    missing = decide_nccl_policy(facts(3, {"0-1": "PHB"}))
    assert missing["tagged_warnings"] == ["facts: no topology class for pairs ['0-2', '1-2']: nvidia-smi topo -m gave "
                                          "no answer for them"]
    assert missing["expected_transport"] == "SHM"


# ------------------------------------------------------------------------------------------ pass-through

@pytest.mark.parametrize("knob", nccl.DEBUG_KNOBS)
def test_each_debugging_knob_in_the_pass_through_is_noted(knob):
    """Every debugging knob is flagged for removal, except the two P2P variables an operator may really need."""
    policy = decide_nccl_policy(facts(2, "PIX"), passthrough_env={knob: "0"})
    note = "debugging knobs in the pass-through: remove them once the investigation is over"
    assert (note in policy["notes"]) is (knob not in ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"))
    assert whys(policy)[-2:] == [("debug-knobs-opt-in", "explicit pass-through of %s" % knob), TAIL[1]]


def test_pass_through_overrides_and_shm_warning():
    """Pass-through values win, as text; an override and NCCL_SHM_DISABLE=1 are warned about; others not."""
    passthrough = {"NCCL_P2P_LEVEL": "SYS", "NCCL_SHM_DISABLE": 1, "NCCL_ALGO": "Ring", "NCCL_DEBUG": "INFO"}
    policy = decide_nccl_policy(facts(2, "PHB"), passthrough_env=passthrough)
    assert policy["env"] == {"NCCL_P2P_LEVEL": "SYS", "NCCL_ALGO": "Ring", "NCCL_DEBUG": "INFO", "NCCL_SHM_DISABLE": "1"}
    assert policy["tagged_warnings"] == [
        "debug-knobs-opt-in: pass-through NCCL_P2P_LEVEL=SYS overrides the rules' NCCL_P2P_LEVEL=PHB",
        "debug-knobs-opt-in: NCCL_SHM_DISABLE=1 pushes single-host traffic to sockets "
        "(docs/reference/nccl-over-pcie.md#p2p-and-shm-variables): almost never wanted"]
    assert whys(policy)[-2] == ("debug-knobs-opt-in",
                                "explicit pass-through of NCCL_ALGO, NCCL_DEBUG, NCCL_P2P_LEVEL, NCCL_SHM_DISABLE")
    same = decide_nccl_policy(facts(2, "PHB"), passthrough_env={"NCCL_P2P_LEVEL": "PHB", "NCCL_SHM_DISABLE": "0"})
    assert same["warnings"] == []


# ------------------------------------------------------------------------------------------ several groups

def six(bad=("2-3",)):
    """Six GPUs in three switch pairs (0-1, 2-3, 4-5), SYS between pairs; ``bad`` pairs have no driver P2P."""
    links = {"%d-%d" % c: "SYS" for c in itertools.combinations(range(6), 2)}
    links.update({"0-1": "PIX", "2-3": "PIX", "4-5": "PIX"})
    return facts(6, links, p2p={k: ("NS" if k in bad else "OK") for k in links})


def refused(name, gpus, others, verb):
    """The tp-group error for a P2P group that the others' NCCL_P2P_DISABLE=1 would change."""
    return ("tp-group: %s (GPUs %s) needs no NCCL variable, but %s %s NCCL_P2P_DISABLE=1 to the environment file all "
            "instances share: NCCL would use SHM instead of P2P in %s, and SGLang flags disable_custom_all_reduce: true "
            "would reach it too. %s" % (name, gpus, others, verb, name, SEPARATE))


def test_merge_refuses_a_group_it_would_change_whatever_the_order():
    """The group that would change is named, however the groups are ordered; rule whys carry the group's name."""
    for groups in ({"b": [2, 3], "a": [0, 1]}, {"a": [0, 1], "b": [2, 3]}):
        policy = decide_nccl_policy(six(), groups=groups)
        assert policy["tagged_errors"] == [refused("a", [0, 1], "b", "adds")]
        assert policy["expected_transport"] is None
        assert ("disable-p2p-when-unusable", "b: driver P2P status not OK for 2-3=NS" + DISABLED) in whys(policy)


def test_merge_names_every_group_that_adds():
    """Two groups adding the same variable: 'b and c add'."""
    policy = decide_nccl_policy(six(bad=("2-3", "4-5")), groups={"a": [0, 1], "b": [2, 3], "c": [4, 5]})
    assert policy["tagged_errors"] == [refused("a", [0, 1], "b and c", "add")]


def test_a_one_gpu_group_fits_any_environment():
    """A single-GPU group has no traffic: it is never refused, and only its note is kept."""
    policy = decide_nccl_policy(six(), groups={"b": [2, 3], "solo": [0]})
    assert (policy["errors"], policy["tp_gpus"], policy["expected_transport"]) == ([], [0, 2, 3], "SHM")
    assert policy["notes"] == ["solo: tensor-parallel group [0] has one GPU: no inter-GPU traffic, no NCCL environment "
                               "needed"]


def test_merge_prefixes_messages_and_lists_requirements_once():
    """Warnings, notes and whys start with the group's name; a requirement two groups share is listed once."""
    f = facts(4, {"0-1": "NV18", "2-3": "NV18", "0-2": "SYS", "0-3": "SYS", "1-2": "SYS", "1-3": "SYS"}, nvswitch=True)
    policy = decide_nccl_policy(f, groups={"x": [0, 1], "y": [2, 3]})
    assert policy["requirements"] == ["nvidia-fabricmanager 580.105.08 running"]
    assert policy["notes"] == ["%s: NVSwitch board: nvidia-fabricmanager must run at driver version 580.105.08, or CUDA "
                               "init fails" % n for n in ("x", "y")]
    warned = decide_nccl_policy(facts(4, {"0-1": "PHB"}), groups={"x": [0, 1], "y": [2, 3]})
    assert warned["tagged_warnings"] == ["facts: y: no topology class for pairs ['2-3']: nvidia-smi topo -m gave no "
                                         "answer for them"]
    assert warned["groups"][1] == {"name": "y", "tp_gpus": [2, 3], "env": {}, "server_args": {},
                                   "expected_transport": "SHM", "suggested_cuda_visible_devices": None}
