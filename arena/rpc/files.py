"""Files the commands write where the user says (``--out``): never through what another user may have
put at that name in a folder others may write in (``/tmp``)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

NOT_ITS_OWN = "not a file of its own (a FIFO, a device, another name of a file)"


def is_plain_file(info: os.stat_result, owner: int | None = None) -> bool:
    """``info`` is of a regular file with no other name (and, given ``owner``, that user's): not what
    another user may have put at a name in a folder they may write in (a FIFO, a device, a hard link)."""
    return stat.S_ISREG(info.st_mode) and info.st_nlink <= 1 and (owner is None or info.st_uid == owner)


@contextmanager
def open_named_file(path: str | Path, newline: str | None = None) -> Iterator[TextIO]:
    """``path`` opened for writing as a new whole (UTF-8 text), refusing a link (the file it names, maybe
    one of the user's own, was emptied and replaced) and a second name of another file, a FIFO or a
    device. OSError for those, its strerror saying which."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a link (give the file it names)", str(path)) from None
        if error.errno == errno.ENXIO:  # a FIFO no process reads
            raise OSError(errno.EINVAL, NOT_ITS_OWN, str(path)) from None
        raise
    with os.fdopen(descriptor, "w", encoding="utf-8", newline=newline) as out:
        info = os.fstat(descriptor)
        if not is_plain_file(info):
            raise OSError(errno.EINVAL, NOT_ITS_OWN, str(path))
        out.truncate(0)
        yield out


def write_named_file(path: str | Path, text: str) -> None:
    """``text`` as the whole of the file ``path`` (``open_named_file``)."""
    with open_named_file(path) as out:
        out.write(text)


def refuse_planted(path: str | Path) -> None:
    """OSError, as ``open_named_file`` would give, for what stands at ``path`` that it would refuse
    (nothing there is fine): for a command writing several files, checked for all before any is emptied."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise OSError(errno.ELOOP, "a link (give the file it names)", str(path))
    if not is_plain_file(info):
        raise OSError(errno.EINVAL, NOT_ITS_OWN, str(path))
