"""Release selection, install-time settings, and the wheel carrying the flag tables."""
# pylint: disable=missing-function-docstring,redefined-outer-name  # pytest idioms: named tests, fixtures as arguments

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from standin_helpers import ROOT, standin_env
from sglang._standin import settings


@pytest.fixture
def install_file(tmp_path, monkeypatch):
    """Point the install-time settings file at a temporary path."""
    path = tmp_path / "sglang-standin.json"
    monkeypatch.setattr(settings, "install_file", lambda: path)
    monkeypatch.setattr(settings, "_CACHE", {})
    monkeypatch.delenv("SGLANG_STANDIN_RELEASE", raising=False)
    return path


def test_default_release_is_the_newest_table(install_file):
    assert not install_file.exists()
    assert settings.release() == settings.available_tables()[-1] == "0.5.23"


def test_install_file_sets_the_release_and_env_wins(install_file, monkeypatch):
    install_file.write_text(json.dumps({"release": "0.5.12"}))
    assert settings.release() == "0.5.12"
    monkeypatch.setenv("SGLANG_STANDIN_RELEASE", "0.5.19")
    assert settings.release() == "0.5.19"


def test_undumped_release_uses_the_older_table():
    assert settings.table_release("0.5.21") == "0.5.20"
    assert settings.table_release("0.5.13") == "0.5.12"
    with pytest.raises(SystemExit):
        settings.table_release("0.5.8")


def test_version_attribute_follows_the_setting():
    code = "import sglang; print(sglang.__version__, sglang.STANDIN)"
    out = subprocess.run([sys.executable, "-c", code], env=standin_env(release="0.5.14"),
                         capture_output=True, text=True, timeout=30, check=True).stdout.split()
    assert out == ["0.5.14", "True"]


def test_flag_tables_are_the_repo_copy():
    """One copy in the repo: each table in the package is a link to its file in data/sglang_flags, and none is missing.

    Per-file links, because ansible-test's sanity refuses symlinks to folders.
    """
    folder = ROOT / "tools" / "standins" / "sglang" / "src" / "sglang" / "_standin" / "flag_tables"
    repo_tables = sorted(p.name for p in (ROOT / "data" / "sglang_flags").glob("*.json"))
    assert sorted(p.name for p in folder.iterdir()) == repo_tables
    for link in folder.iterdir():
        assert link.is_symlink() and link.resolve() == (ROOT / "data" / "sglang_flags" / link.name).resolve()


def can_build_wheel() -> bool:
    """An offline build needs setuptools with bdist_wheel: 70.1+ has it, older ones need ``wheel``."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools  # pylint: disable=import-outside-toplevel
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    return version >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.mark.skipif(not can_build_wheel(), reason="no offline wheel build here (setuptools<70.1 without wheel)")
def test_wheel_contains_tables_and_profiles(tmp_path):
    """Build the wheel from a copy of the checkout's layout, so the source tree stays clean."""
    tree = tmp_path / "repo"
    shutil.copytree(ROOT / "tools" / "standins" / "sglang", tree / "tools" / "standins" / "sglang", symlinks=True,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    shutil.copytree(ROOT / "data" / "sglang_flags", tree / "data" / "sglang_flags")
    (tree / "plugins" / "module_utils" / "gpu").mkdir(parents=True)
    for name in ("ceiling.py", "specs.py"):  # the decode model the stand-in paces by (physics/ symlinks)
        shutil.copy(ROOT / "plugins" / "module_utils" / "gpu" / name, tree / "plugins" / "module_utils" / "gpu" / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "dist"), str(tree / "tools" / "standins" / "sglang")], check=True, timeout=120)
    wheel = next((tmp_path / "dist").glob("sglang_standin-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()  # pylint: disable=consider-using-with
    tables = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("sglang/_standin/flag_tables/"))
    assert tables == sorted(p.name for p in (ROOT / "data" / "sglang_flags").glob("*.json"))
    assert "sglang/_standin/profiles/a6000x2-27b-nextn.json" in names
    assert "sglang/_standin/physics/ceiling.py" in names and "sglang/_standin/physics/specs.py" in names
    assert "sglang/srt/server_args.py" in names and "sglang/launch_server.py" in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "sglang = sglang.cli.main:main" in zipfile.ZipFile(wheel).read(entry).decode()  # pylint: disable=consider-using-with
