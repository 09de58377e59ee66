"""Build hook: compile the engine's hot modules with mypyc, or install them as plain Python.

pyproject.toml holds the project's metadata; this file only adds the compiled modules. The ``.py``
files in ``ohell/`` stay the one source: mypyc turns each module below into a C extension that is
installed beside its ``.py`` file (an editable install puts it in the source tree, git-ignored),
and Python imports an extension before a ``.py`` file of the same name.

The pure-Python engine is installed instead, with a warning, when

- the environment variable ``OHELL_PURE`` is set to anything but ``""`` or ``"0"``;
- mypyc cannot be imported (it comes with mypy, a build requirement in pyproject.toml);
- mypyc or the C compiler fails, for example on a machine with no C compiler.

Either way every module behaves the same. ``ohell.engine_build()`` says which build is running,
and ``python -X ohell_pure`` makes one process use the ``.py`` files of a compiled install.
"""

from __future__ import annotations

import glob
import os
import sys
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

# The modules a hand goes through on every action; the rest of ohell stays interpreted.
HOT_MODULES = ["cards", "chance", "hand", "scoring", "schedule", "state"]
GROUP = "ohell_engine"  # mypyc's shared library: ohell_engine__mypyc.<platform tag>.so


def warn(message: str) -> None:
    sys.stderr.write(f"ohell-arena: {message}; installing the pure-Python engine\n")


def remove_in_tree_extensions() -> None:
    """Delete compiled engine modules left in the source tree by an earlier editable install, so
    that a pure install is not shadowed by stale extensions."""
    here = os.path.dirname(os.path.abspath(__file__))
    patterns = [os.path.join(here, "ohell", f"{name}.*.so") for name in HOT_MODULES]
    patterns += [os.path.join(here, "ohell", f"{name}.*.pyd") for name in HOT_MODULES]
    patterns += [os.path.join(here, f"{GROUP}__mypyc.*")]
    for pattern in patterns:
        for path in glob.glob(pattern):
            os.remove(path)


class OptionalBuildExt(build_ext):
    """build_ext that falls back to the pure-Python engine when compiling fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler, a compiler error, a missing header
            warn(f"compiling the engine failed ({type(error).__name__}: {error})")
            for ext in self.extensions:
                built = os.path.join(self.build_lib, self.get_ext_filename(self.get_ext_fullname(ext.name)))
                if os.path.exists(built):
                    os.remove(built)
            self.extensions = []
            remove_in_tree_extensions()


def compiled_modules() -> list[Any]:
    if os.environ.get("OHELL_PURE", "") not in ("", "0"):
        warn("OHELL_PURE is set")
        remove_in_tree_extensions()
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        warn("mypyc is not available")
        remove_in_tree_extensions()
        return []
    try:
        return list(mypycify([f"ohell/{name}.py" for name in HOT_MODULES], opt_level="3", group_name=GROUP))
    except (Exception, SystemExit) as error:  # mypyc exits on code it cannot compile
        warn(f"mypyc failed ({type(error).__name__}: {error})")
        remove_in_tree_extensions()
        return []


setup(ext_modules=compiled_modules(), cmdclass={"build_ext": OptionalBuildExt})
