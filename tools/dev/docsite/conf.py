# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sphinx settings of the collection's docsite (`make docs`, tools/dev/docs). Builds offline.

Started from `antsibull-docs sphinx-init`; changed: no intersphinx (it fetches inventories from the network), the
few labels of Ansible's own documentation that the generated pages use resolve to fixed addresses instead, and
MyST reads the operator guides, which are Markdown. A guide's link to a file outside docs/ (code, README) points at
that file in the repository instead of failing the build.
"""

from __future__ import annotations

import posixpath
import re

from docutils import nodes

project = "gpufleet.sglang"
copyright = "gpufleet.sglang contributors"  # noqa: A001 (Sphinx's name)
title = "gpufleet.sglang"
html_short_title = "gpufleet.sglang"

extensions = ["sphinx_antsibull_ext", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 4
pygments_style = "ansible"
highlight_language = "YAML+Jinja"
html_theme = "sphinx_ansible_theme"
html_show_sphinx = False
display_version = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False
default_role = "any"
nitpicky = True
suppress_warnings = ["myst.header"]  # guides start at a level-2 heading in places; that is fine on a web page

REPOSITORY = "https://github.com/gpufleet/sglang/blob/main/"
ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/devel/"
# Labels of Ansible's documentation that antsibull-docs' pages refer to, and where they live.
ANSIBLE_LABELS = {
    "ansible_configuration_settings": "reference_appendices/config.html#ansible-configuration-settings",
    "common_return_values": "reference_appendices/common_return_values.html#common-return-values",
    "action_plugins": "plugins/action.html#action-plugins",
}
LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")


def ansible_label(app, env, node, contnode):  # noqa: ARG001 (Sphinx's signature)
    """Resolve a reference to one of Ansible's own labels without its inventory; any other stays an error."""
    target = node.get("reftarget", "")
    if node.get("refdomain") in ("std", None, "") and target in ANSIBLE_LABELS:
        reference = nodes.reference("", "", internal=False, refuri=ANSIBLE_DOCS + ANSIBLE_LABELS[target])
        reference.append(contnode)
        return reference
    return None


def outside_links(app, docname, source):  # noqa: ARG001
    """In a guide (guides/<path under docs/>), a link that leaves docs/ goes to the repository's copy."""
    if not docname.startswith("guides/"):
        return
    folder = posixpath.dirname("docs/" + docname[len("guides/"):])

    def rewrite(match):
        target = match.group(1)
        path, _hash, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(folder, path))
        if resolved.startswith("docs/") and path.endswith(".md"):
            return match.group(0)
        return "](" + REPOSITORY + resolved + ("#" + anchor if anchor else "") + ")"

    source[0] = LINK.sub(rewrite, source[0])


def setup(app):
    app.connect("missing-reference", ansible_label)
    app.connect("source-read", outside_links)
