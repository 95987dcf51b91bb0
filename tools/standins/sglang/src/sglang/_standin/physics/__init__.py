"""The collection's decode model, so the stand-in paces tokens by the expectation the probe's verdict uses.

``ceiling.py`` and ``specs.py`` here are symlinks to ``plugins/module_utils/gpu/`` (``pip wheel`` follows them,
as it does for ``flag_tables``): one model, not a copy that can drift. ``ceiling.py`` imports ``specs`` by the
collection's absolute name, so both are loaded under that name unless the collection itself is importable
(the controller, the tests), in which case its own modules are used.
"""

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_PACKAGE = "ansible_collections.gpufleet.sglang.plugins.module_utils.gpu"


def _load(name: str) -> ModuleType:
    """The collection's module ``name`` (``specs``, ``ceiling``): imported when available, else loaded from here."""
    full = f"{_PACKAGE}.{name}"
    if full in sys.modules:
        return sys.modules[full]
    try:
        return importlib.import_module(full)
    except ImportError:
        pass
    spec = importlib.util.spec_from_file_location(full, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


specs = _load("specs")
ceiling = _load("ceiling")
