"""The console every ``ohell`` command prints with. It prints text as given: no rich markup or
emoji codes are read in it, so a value with brackets (a file name, a bot, a server's error echoing
a name) neither raises rich's MarkupError nor loses its text. Colour goes in as ``rich.text.Text``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def text_console() -> Console:
    return Console(markup=False, emoji=False)


def labelled(label: str, style: str, rest: str) -> Text:
    """``label`` in ``style``, then ``rest`` as plain text."""
    return Text.assemble((label, style), rest)
