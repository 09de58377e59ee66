"""The Oh Hell rules engine (standard library only, no I/O).

Installing the project compiles the hot modules (``cards``, ``chance``, ``hand``, ``scoring``,
``schedule``, ``state``) with mypyc when it can, from these same ``.py`` files (``setup.py``);
otherwise they run as plain Python. Both builds behave the same. ``engine_build()`` says which
one this process runs; ``python -X ohell_pure ...`` makes it run the ``.py`` files even where the
compiled modules are installed (the tests use this to check the pure build too).
"""

from __future__ import annotations

import sys

if "ohell_pure" in sys._xoptions:
    from importlib.machinery import SOURCE_SUFFIXES, FileFinder, SourceFileLoader

    # Submodules of this package are looked up in these folders: find only source files there.
    for _folder in __path__:
        sys.path_importer_cache[_folder] = FileFinder(_folder, (SourceFileLoader, SOURCE_SUFFIXES))


def engine_build() -> str:
    """``"compiled"`` when the engine's modules run as mypyc extensions, else ``"pure"``."""
    from ohell import state

    return "pure" if (state.__file__ or "").endswith(".py") else "compiled"
