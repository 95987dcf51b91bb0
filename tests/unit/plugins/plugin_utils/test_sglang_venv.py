# -*- coding: utf-8 -*-
"""The venv of a release: one formula, and the sglang_server role's fallback finds what sglang_install makes."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
import yaml

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.sglang_venv import sglang_venv

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("root,source,version,expected", [
    ("/opt/sglang", "pypi", "0.5.23", "/opt/sglang/venvs/0.5.23"),
    ("/opt/sglang", "standin", "0.5.23", "/opt/sglang/venvs/standin-0.5.23"),
    ("/srv/llm", "pypi", "0.5.23.post1", "/srv/llm/venvs/0.5.23.post1"),
    ("/srv/llm/", "standin", "0.5.9", "/srv/llm//venvs/standin-0.5.9"),  # the root as given, like the role always did
])
def test_the_venv_of_a_release(root, source, version, expected):
    assert sglang_venv(root, source, version) == expected


def _yaml(path):
    return yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))


def _render(text, **variables):
    """A role variable's template, rendered with plain Jinja and this collection's filter under its full name."""
    env = jinja2.Environment(undefined=jinja2.Undefined)
    env.filters["gpufleet.sglang.sglang_venv"] = sglang_venv
    return env.from_string(text).render(**variables).strip()


@pytest.mark.parametrize("settings", [{}, {"sglang_install_source": "standin"},
                                      {"sglang_install_root": "/srv/llm", "sglang_install_version": "0.5.22"}])
def test_sglang_server_finds_the_venv_sglang_install_makes_without_its_fact(settings):
    install = dict(_yaml("roles/sglang_install/defaults/main.yml"), **settings)
    made = _render(_yaml("roles/sglang_install/vars/main.yml")["__sglang_install_venv"], **install)
    # sglang_server sees only what the inventory sets (settings), never sglang_install's role defaults.
    found = _render(_yaml("roles/sglang_server/defaults/main.yml")["sglang_server_venv"], **settings)
    assert found == made
    assert made == sglang_venv(install["sglang_install_root"], install["sglang_install_source"], install["sglang_install_version"])


def test_sglang_server_takes_the_fact_when_sglang_install_ran():
    template = _yaml("roles/sglang_server/defaults/main.yml")["sglang_server_venv"]
    assert _render(template, sglang_install_venv="/elsewhere/venvs/0.5.23", sglang_install_root="/ignored") == "/elsewhere/venvs/0.5.23"
