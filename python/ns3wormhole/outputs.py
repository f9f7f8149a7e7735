"""Output files and folders: checked before a run starts, written atomically after it.

Results are the expensive part of a run, so every output path (``--json``, ``--report``,
a sweep's folder, a memo database's folder) is checked *before* the first event with
:func:`check_output_file` / :func:`check_output_dir`, and written with
:func:`write_text` / :func:`write_bytes`:

* the name is resolved as the shell would (``--json link`` writes the link's target,
  not a new file in place of the link);
* a FIFO or character device (``/dev/stdout``) is written to directly, never replaced;
* otherwise the data goes to a temporary file in the same folder, then ``os.replace``
  moves it over the target: a reader never sees half a file, and a full disk leaves the
  old file and no ``.tmp`` behind;
* every failure is an :class:`OutputError` naming the file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["OutputError", "check_output_file", "check_output_dir", "write_text", "write_bytes", "write_figure", "resolve"]


class OutputError(OSError):
    """An output path that cannot be written; ``str()`` is one line naming it."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def __reduce__(self):  # picklable across sweep processes
        return (type(self), (self.path, self.message))


def resolve(path: str | os.PathLike[str]) -> Path:
    """The file a shell redirection would write: symlinks followed (also dangling ones,
    whose target is then created)."""
    return Path(os.path.realpath(os.fspath(path)))


def _is_stream(p: Path) -> bool:
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _can_create_in(folder: Path) -> bool:
    """Try it: permissions, read-only mounts and immutable folders all show (also as root)."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".ns3wh-probe-")
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


def _writable_folder(folder: Path, shown: str) -> None:
    if not folder.exists():
        raise OutputError(shown, f"folder {folder} does not exist")
    if not folder.is_dir():
        raise OutputError(shown, f"{folder} is not a folder")
    if not _can_create_in(folder):
        raise OutputError(shown, f"folder {folder} is not writable")


def check_output_file(path: str | os.PathLike[str] | None, forbid: list[str | os.PathLike[str] | None] | None = None) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written as a file. ``None`` and
    ``"-"`` (stdout) pass. ``forbid``: files the output must not be (the memo database)."""
    if path is None or os.fspath(path) == "-":
        return
    shown = os.fspath(path)
    target = resolve(path)
    for other in forbid or ():
        if other is not None and resolve(other) == target:
            raise OutputError(shown, f"is {other}, an input of this run; it would be overwritten")
    if _is_stream(target):
        if not os.access(target, os.W_OK):
            raise OutputError(shown, "is not writable")
        return
    if target.is_dir():
        raise OutputError(shown, "is a directory")
    if target.exists() and not target.is_file():
        raise OutputError(shown, "is not a regular file")
    _writable_folder(target.parent, shown)
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(shown, "is not writable")


def check_output_dir(path: str | os.PathLike[str]) -> None:
    """Raise :class:`OutputError` unless ``path`` is a writable folder or can be created
    (its nearest existing ancestor is a writable folder)."""
    shown = os.fspath(path)
    p = resolve(path)
    if p.exists():
        if not p.is_dir():
            raise OutputError(shown, "exists and is not a folder")
        if not _can_create_in(p):
            raise OutputError(shown, "folder is not writable")
        return
    anc = p.parent
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise OutputError(shown, f"cannot be created: {anc} is not a folder")
    if not _can_create_in(anc):
        raise OutputError(shown, f"cannot be created: folder {anc} is not writable")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module doc); returns the file written."""
    shown = os.fspath(path)
    target = resolve(path)
    if _is_stream(target):
        try:
            with open(target, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise OutputError(shown, f"cannot write: {_reason(exc)}") from None
        return target
    if target.is_dir():
        raise OutputError(shown, "is a directory")
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            # mkstemp makes the file 0600; a plain open() would give 0666 minus the umask
            umask = os.umask(0)
            os.umask(umask)
            mode = stat.S_IMODE(os.stat(target).st_mode) if target.exists() else 0o666 & ~umask
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise OutputError(shown, f"cannot write: {_reason(exc)}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return target


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`write_bytes` of ``text`` in UTF-8."""
    return write_bytes(path, text.encode("utf-8"))


def write_figure(path: str | os.PathLike[str], fig, **savefig_kw) -> Path:
    """A matplotlib figure written as PNG through :func:`write_bytes`."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", **savefig_kw)
    return write_bytes(path, buf.getvalue())
