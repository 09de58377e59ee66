"""Files the commands write where the user says (``--out``): never through what another user may have
put at that name in a folder others may write in (``/tmp``)."""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import re
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TextIO

NOT_ITS_OWN = "not a file of its own (a FIFO, a device, another name of a file)"
NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS}  # flock's answers where a file system has none


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


def _new_beside(path: Path) -> tuple[Path, int]:
    """A new file of a hidden name beside ``path`` (``.NAME.XXXXXXXX.partial``), never one that was there,
    made with no more permissions than the file at ``path`` has: a file of 600 was readable by others in
    its partial copy while it was written (one who opened it then read the whole export)."""
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode) & 0o666
    except FileNotFoundError:
        mode = 0o666
    while True:
        partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            descriptor = os.open(partial, flags, mode)
        except FileExistsError:
            continue
        try:
            _lock(descriptor)  # held while it is written: an export running holds its own
            if os.path.samestat(os.fstat(descriptor), os.lstat(partial)):
                return partial, descriptor
        except FileNotFoundError:  # taken for stale by another export before it was locked: a new one
            pass
        except BaseException:
            os.close(descriptor)
            with suppress(FileNotFoundError):
                partial.unlink()
            raise
        os.close(descriptor)


def _lock(descriptor: int) -> None:
    """An exclusive lock on the open file; none where its file system keeps no locks (NFS without its
    lock manager, some FUSE file systems): ``remove_stale_partials`` takes none there either, so removes
    nothing there, and an export still writes its files."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except OSError as error:
        if error.errno not in NO_LOCKS:
            raise


def remove_stale_partials(path: Path) -> list[Path]:
    """Remove the partial copies of ``path`` an export killed outright (SIGKILL, the machine gone) left
    beside it, and return them: only names of ``_new_beside``'s pattern, plain files of this user which
    no process holds (a running export keeps its own locked until it is in place)."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[0-9a-f]{{8}}\.partial")
    removed = []
    for candidate in path.parent.glob(f".{glob.escape(path.name)}.*.partial"):
        try:
            if not pattern.fullmatch(candidate.name) or not is_plain_file(os.lstat(candidate), os.getuid()):
                continue  # what is no file of ours (a FIFO, a device) is not even opened
            descriptor = os.open(candidate, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:  # gone meanwhile, a link, not ours to read
            continue
        try:
            info = os.fstat(descriptor)
            if not is_plain_file(info, os.getuid()):
                continue
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: being written
            if os.path.samestat(info, os.lstat(candidate)):  # still the file at that name
                candidate.unlink()
                removed.append(candidate)
        except OSError:
            continue
        finally:
            os.close(descriptor)
    return removed


@contextmanager
def files_written_whole(folder: Path, names: Sequence[str]) -> Iterator[dict[str, TextIO]]:
    """The files ``names`` in ``folder`` (UTF-8 text, newline ""), each written under a hidden name beside
    it and put at its own name only once every one is written: a failure midway (an error, the stack gone,
    Ctrl-C) leaves the folder's files as they were, none half written. A file that was there keeps its
    mode; what ``refuse_planted`` refuses at a name is refused before anything is written and again before
    it is replaced. The hidden copies of those files an export killed outright left are removed first
    (``remove_stale_partials``)."""
    for name in names:
        refuse_planted(folder / name)
    for name in names:
        remove_stale_partials(folder / name)
    partials: dict[str, Path] = {}
    files: dict[str, TextIO] = {}
    try:
        for name in names:
            partials[name], descriptor = _new_beside(folder / name)
            files[name] = os.fdopen(descriptor, "w", encoding="utf-8", newline="")
        yield files
        for name in names:
            files[name].flush()  # not closed (that would free its lock) until it is in place
            refuse_planted(folder / name)
            with suppress(FileNotFoundError):
                os.chmod(partials[name], stat.S_IMODE(os.lstat(folder / name).st_mode))
        for name in names:
            os.replace(partials[name], folder / name)
            del partials[name]
    finally:
        for file in files.values():
            file.close()
        for partial in partials.values():
            with suppress(FileNotFoundError):
                partial.unlink()
