"""SGLang STAND-IN: a test and rehearsal backend that behaves like SGLang without a GPU.

Installed as the distribution ``sglang-standin``; it is not the SGLang inference
engine. ``__version__`` is the SGLang release it plays (``SGLANG_STANDIN_RELEASE``,
or the install-time ``sglang-standin.json``, or the newest flag table).
"""

from sglang.version import __version__

STANDIN = True

__all__ = ["__version__", "STANDIN"]
