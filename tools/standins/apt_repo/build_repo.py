#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a small signed flat APT repository of empty stand-in packages (TEST ONLY).

Why: the nvidia_driver role must be exercised up to the package manager on lab hosts that have no internet and
no GPU. This builds, from a JSON spec, empty packages named and versioned like NVIDIA's (a few may carry a file,
such as a systemd unit that only sleeps), indexes them the way NVIDIA's CUDA repository is laid out (a flat
repository, ``deb [signed-by=KEY] URL /``), and signs the index with a throw-away key, so apt on the host runs
its real path: key, source, signature check, dependency resolution, version pins, holds.

Needs ``dpkg-deb`` (dpkg) and ``gpg``; everything else is the standard library. Run with ``--help``.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

KEY_UID = "gpufleet apt repository stand-in (TEST ONLY) <apt-standin@gpufleet.invalid>"


def substitute(value: Any, names: Dict[str, str]) -> Any:
    """Fill ``{kernel}``-style placeholders in every string of the spec (lab hosts share the controller's kernel)."""
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


def control_text(pkg: Dict[str, Any]) -> str:
    """The DEBIAN/control of one stand-in package."""
    fields = [
        ("Package", pkg["name"]),
        ("Version", pkg["version"]),
        ("Architecture", pkg.get("architecture", "all")),
        ("Maintainer", "gpufleet test stand-in <apt-standin@gpufleet.invalid>"),
        ("Section", pkg.get("section", "misc")),
        ("Priority", "optional"),
    ]
    for key in ("Depends", "Conflicts", "Provides", "Replaces"):
        if pkg.get(key.lower()):
            fields.append((key, ", ".join(pkg[key.lower()])))
    summary = pkg.get("description", "empty stand-in named like NVIDIA's package")
    fields.append(("Description", "TEST STAND-IN: %s\n This package is empty (or carries a placeholder file); it exists to test "
                   "package management\n of gpufleet.sglang.nvidia_driver on hosts without GPUs. Never install it elsewhere." % summary))
    return "".join("%s: %s\n" % kv for kv in fields)


def build_deb(pkg: Dict[str, Any], out: Path, work: Path) -> Path:
    """dpkg-deb --build one package into ``out``; files listed in the spec are written into its tree."""
    tree = work / ("%s_%s" % (pkg["name"], pkg["version"]))
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(control_text(pkg), encoding="utf-8")
    for item in pkg.get("files", []):
        target = tree / item["path"].lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(item["content"], encoding="utf-8")
        target.chmod(int(item.get("mode", "0644"), 8))
    deb = out / ("%s_%s_%s.deb" % (pkg["name"], pkg["version"].split(":")[-1], pkg.get("architecture", "all")))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(tree), str(deb)],
                   check=True, stdout=subprocess.DEVNULL)
    return deb


def file_hashes(path: Path) -> Dict[str, str]:
    """Size and the digests apt's indexes carry."""
    data = path.read_bytes()
    return {"Size": str(len(data)), "MD5sum": hashlib.md5(data).hexdigest(),  # nosec: index format, not security
            "SHA1": hashlib.sha1(data).hexdigest(),  # nosec: index format, not security
            "SHA256": hashlib.sha256(data).hexdigest()}


def packages_index(debs: List[Path]) -> str:
    """The Packages index: each package's control fields plus Filename (relative to the flat repo) and digests."""
    stanzas = []
    for deb in sorted(debs):
        control = subprocess.run(["dpkg-deb", "-f", str(deb)], check=True, capture_output=True, text=True).stdout.rstrip("\n")
        extra = {"Filename": "./" + deb.name}
        extra.update(file_hashes(deb))
        stanzas.append(control + "\n" + "".join("%s: %s\n" % kv for kv in extra.items()))
    return "\n".join(stanzas)


def release_file(out: Path, origin: str, label: str, indexes: List[str]) -> str:
    """The Release file of a flat repository: what apt verifies the signature of, with every index's digest."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S UTC")
    lines = ["Origin: %s" % origin, "Label: %s" % label, "Architectures: all amd64 arm64", "Date: %s" % now]
    for title, key in (("MD5Sum", "MD5sum"), ("SHA1", "SHA1"), ("SHA256", "SHA256")):
        lines.append("%s:" % title)
        for name in indexes:
            digests = file_hashes(out / name)
            lines.append(" %s %16s %s" % (digests[key], digests["Size"], name))
    return "\n".join(lines) + "\n"


def gpg(home: str, *args: str, stdin: bytes = b"") -> bytes:
    """Run gpg on the throw-away keyring, batch mode, no passphrase."""
    cmd = ["gpg", "--homedir", home, "--batch", "--yes", "--pinentry-mode", "loopback", "--passphrase", ""] + list(args)
    return subprocess.run(cmd, input=stdin, check=True, capture_output=True).stdout


def sign(out: Path) -> str:
    """Sign Release with a fresh key (InRelease and Release.gpg), export the key as repo-key.asc; return its fingerprint."""
    if shutil.which("gpg") is None:
        sys.exit("build_repo: gpg is needed to sign the repository (Debian package: gpg)")
    home = tempfile.mkdtemp(prefix="gfrepo-")  # short path: gpg-agent's socket path has a length limit
    try:
        gpg(home, "--quick-gen-key", KEY_UID, "ed25519", "sign", "never")
        (out / "repo-key.asc").write_bytes(gpg(home, "--armor", "--export"))
        gpg(home, "--digest-algo", "SHA256", "--clearsign", "--output", str(out / "InRelease"), str(out / "Release"))
        gpg(home, "--digest-algo", "SHA256", "--armor", "--detach-sign", "--output", str(out / "Release.gpg"), str(out / "Release"))
        listing = gpg(home, "--with-colons", "--fingerprint").decode()
        fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
    finally:
        subprocess.run(["gpgconf", "--homedir", home, "--kill", "all"], check=False, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)
    return fingerprint


def build(spec: Dict[str, Any], out: Path) -> Dict[str, Any]:
    """Build the whole repository into ``out`` (emptied first) and return a summary."""
    names = {"kernel": os.uname().release}
    spec = substitute(spec, names)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="gfrepo-build-") as work:
        debs = [build_deb(pkg, out, Path(work)) for pkg in spec["packages"]]
    index = packages_index(debs)
    (out / "Packages").write_text(index, encoding="utf-8")
    with gzip.GzipFile(out / "Packages.gz", "wb", mtime=0) as handle:
        handle.write(index.encode("utf-8"))
    (out / "Release").write_text(release_file(out, spec.get("origin", "gpufleet-standin"), spec.get("label", "stand-in"),
                                              ["Packages", "Packages.gz"]), encoding="utf-8")
    fingerprint = sign(out)
    return {"repo": str(out), "packages": ["%s=%s" % (p["name"], p["version"]) for p in spec["packages"]],
            "key": str(out / "repo-key.asc"), "fingerprint": fingerprint, "placeholders": names}


def main() -> int:
    """Command line: --spec FILE --out DIR; prints a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, type=Path, help="JSON: {origin, label, packages: [{name, version, depends, files}]}")
    parser.add_argument("--out", required=True, type=Path, help="folder to (re)create with the repository")
    args = parser.parse_args()
    spec = json.loads(args.spec.read_text(encoding="utf-8"))
    print(json.dumps(build(spec, args.out), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
