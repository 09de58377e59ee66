"""The console every ``ohell`` command prints with. It prints text as given: no rich markup or
emoji codes are read in it, so a value with brackets (a file name, a bot, a server's error echoing
a name) neither raises rich's MarkupError nor loses its text. Colour goes in as ``rich.text.Text``.

Control characters other than newline and tab are dropped from everything it prints (rich passes
escape sequences through): a name or message stored before the services checked their input cannot
move the cursor, recolour or retitle the host's terminal. Rich's own styling is unaffected: it is
added after this filter, and rich counts control characters as zero width, so tables keep their
layout."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from arena.wire import fixed as fixed  # arena.cli takes it from here (the floors keep arena.wire from it)
from ohell.errors import OhHellError

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1


class SafeConsole(Console):
    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and CONTROL.search(segment.text):
                yield Segment(CONTROL.sub("", segment.text), segment.style)
            else:
                yield segment


PIPED_WIDTH = 200  # a table written to a file or a pipe is not cut to rich's 80 columns there


def text_console(stderr: bool = False) -> Console:
    console = SafeConsole(markup=False, emoji=False, stderr=stderr)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPED_WIDTH
    return console


def labelled(label: str, style: str, rest: str) -> Text:
    """``label`` in ``style``, then ``rest`` as plain text."""
    return Text.assemble((label, style), rest)


def options_text(options: dict[str, Any]) -> str:
    """Rule options as ``ohell rules`` lists them: ``direction=down, rebound=True, ...`` (unset left out)."""
    return ", ".join(f"{name}={value}" for name, value in options.items() if value is not None)


def out_folder(path: str, flag: str = "--out") -> Path:
    """The folder ``flag`` names, made when missing: OhHellError for a file there (mkdir said only
    'File exists') or a folder that cannot be made."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise OhHellError(f"{flag} {path} is a file: give a folder (made when missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OhHellError(f"{flag} {path}: {error.strerror or error}") from None
    return folder
