"""Errors raised for bad user input (files, scenario keys, inline values).

Every module of the experiment layer reports bad input with :class:`InputError`,
which names *where* the problem is: a file and line (``topo.txt:7: ...``) or a
key path (``fabric.mtu_bytes: ...``).  The CLI prints ``str(err)`` as one line.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad input, located by ``source`` (file path, ``"<inline>"`` or key path)
    and optionally ``line`` (1-based line number in ``source``).

    ``str(err)`` is ``"SOURCE:LINE: message"`` when a line is known, else
    ``"SOURCE: message"``.
    """

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = str(source)
        self.line = line
        self.message = message
        super().__init__(self._format())

    def _format(self) -> str:
        if self.line is not None:
            return f"{self.source}:{self.line}: {self.message}"
        return f"{self.source}: {self.message}"

    def __str__(self) -> str:
        return self._format()

    def __reduce__(self):  # keep pickling (multiprocessing sweeps) working
        return (type(self), (self.source, self.line, self.message))
