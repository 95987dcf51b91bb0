"""The SGLang release this stand-in plays (chosen at install time or by ``SGLANG_STANDIN_RELEASE``)."""

from sglang._standin.settings import release

__version__ = release()
