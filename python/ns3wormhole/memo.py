"""Persistence of the kernel's memoized contention patterns in one SQLite
file that later runs reuse.

The kernel keeps its records in memory (C++, no Python in the loop); before a
run the records of the run's *scope* are loaded into it, and the ones it
learnt are written back afterwards. A scope is a digest of everything that
changes a transient's outcome and is not in the pattern's key: every fabric
parameter (rates, and each hop's capacity, delay and loss rate are in the key
per flow; MTU, headers,
buffer, ECN/PFC, DCQCN parameters are not) and the kernel's steady-state
knobs. The seed is left out on purpose: it varies random draws, not the
physics, and sharing across seeds is the point of a persistent memo.

Several runs may use one file at once: SQLite's WAL journal and a busy
timeout serialise writers, and records are insert-or-ignore by digest.
A file that is not such a database, or whose records do not match their
digests, is rejected with a clear message and never used.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

MAGIC = "ns3wormhole-memo"
SCHEMA = 1
# Bumped with the C++ record format (memo-store.cc kVersion) or the meaning
# of a key, so stale records are never matched.
FORMAT = 6  # 6: a pattern is fresh only if its flows started within 5 us; ending labels carry unsent bytes


class MemoError(ValueError):
    """The memo database cannot be used (names the file)."""


def scope_of(fabric_attributes: dict[str, str], kernel_attributes: dict[str, str]) -> str:
    relevant = {k: v for k, v in fabric_attributes.items() if not k.endswith("::Seed")}
    relevant.update({k: v for k, v in kernel_attributes.items()
                     if k.rsplit("::", 1)[-1] in ("Theta", "Window", "MemoRateQuantum", "CompletionMargin")})
    relevant["format"] = str(FORMAT)
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()[:32]


@dataclass
class MemoInfo:
    path: str
    entries: int
    scopes: int
    size_bytes: int
    hits: int
    misses: int
    inserts: int
    runs: int


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """mode=ro never creates the file nor turns an empty file into a database; without a
    live write-ahead log (no writer has it open), immutable=1 also keeps SQLite from
    creating the -wal and -shm files next to it."""
    live_wal = Path(f"{path}-wal").exists()
    query = "mode=ro" if live_wal else "mode=ro&immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=60, isolation_level=None)


def check_memo_path(path: str | Path) -> None:
    """Before a run: the database can be opened (an existing file must be a memo
    database of this schema; a new one's folder must exist). Reads only."""
    p = Path(path)
    if p.exists() and p.is_dir():
        raise MemoError(f"{p}: is a directory, not a memo database")
    if not p.exists():
        if not p.parent.is_dir():
            raise MemoError(f"{p}: folder {p.parent} does not exist")
        return
    with MemoDatabase(p, create=False, read_only=True):
        pass


class MemoDatabase:
    """``create=False``: the file must exist and be a memo database (never created or
    initialised); ``read_only=True``: opened without write access (``memo info``)."""

    def __init__(self, path: str | Path, create: bool = True, read_only: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise MemoError(f"{self.path}: no such memo database")
        if self.path.is_dir():
            raise MemoError(f"{self.path}: is a directory, not a memo database")
        if not create and self.path.stat().st_size == 0:
            raise MemoError(f"{self.path}: empty file, not an ns3-wormhole memo database")
        try:
            if read_only:
                self._db = _connect_read_only(self.path)
            else:
                self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 60000")
            self._init(create and not read_only)
        except sqlite3.DatabaseError as exc:
            raise MemoError(f"{self.path}: not an ns3-wormhole memo database ({exc})") from None

    def _init(self, create: bool) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and create:
            self._db.execute("PRAGMA journal_mode=WAL")
            with self._tx():
                self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS records (scope TEXT, digest TEXT, blob BLOB, created REAL,"
                    " PRIMARY KEY (scope, digest))")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS usage (scope TEXT PRIMARY KEY, runs INTEGER, hits INTEGER,"
                    " misses INTEGER, inserts INTEGER)")
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('magic', ?), ('schema', ?)", (MAGIC, str(SCHEMA)))
            return
        meta = dict(self._db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
        if meta.get("magic") != MAGIC:
            raise MemoError(f"{self.path}: not an ns3-wormhole memo database (an SQLite file of something else)")
        if str(meta.get("schema", "0")) != str(SCHEMA):
            raise MemoError(f"{self.path}: memo database schema {meta.get('schema')} is not {SCHEMA}; "
                            "clear it or use another file")
        for table in ("records", "usage"):
            if table not in tables:
                raise MemoError(f"{self.path}: memo database has no {table!r} table: the file is damaged; "
                                "delete it or use another file")

    def _tx(self):
        db = self._db

        class _Tx:
            def __enter__(self):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, exc_type, *_):
                db.execute("ROLLBACK" if exc_type else "COMMIT")

        return _Tx()

    def load(self, scope: str) -> list[bytes]:
        """The scope's records. A record whose blob is not bytes (TEXT or NULL written
        by something else) is dropped with a warning naming the count; one whose bytes
        do not match its digest means the file is corrupt (refused)."""
        blobs = []
        try:
            rows = self._db.execute("SELECT digest, blob FROM records WHERE scope = ?", (scope,)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise MemoError(f"{self.path}: unreadable ({exc})") from None
        dropped = 0
        for digest, blob in rows:
            if not isinstance(blob, bytes) or not isinstance(digest, str):
                dropped += 1
                continue
            if hashlib.sha256(blob).hexdigest() != digest:
                raise MemoError(f"{self.path}: a record does not match its digest: the file is corrupt; "
                                "clear it (ns3-wormhole memo clear) or use another file")
            blobs.append(bytes(blob))
        if dropped:
            warnings.warn(f"{self.path}: {dropped} memo record(s) are not binary records and were ignored",
                          UserWarning, stacklevel=2)
        return blobs

    def save(self, scope: str, blobs: list[bytes]) -> int:
        now = time.time()
        with self._tx():
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO records VALUES (?, ?, ?, ?)",
                [(scope, hashlib.sha256(b).hexdigest(), b, now) for b in blobs],
            )
            return self._db.total_changes - before

    def record_usage(self, scope: str, hits: int, misses: int, inserts: int) -> None:
        with self._tx():
            self._db.execute("INSERT OR IGNORE INTO usage VALUES (?, 0, 0, 0, 0)", (scope,))
            self._db.execute(
                "UPDATE usage SET runs = runs + 1, hits = hits + ?, misses = misses + ?, inserts = inserts + ?"
                " WHERE scope = ?", (hits, misses, inserts, scope))

    def info(self) -> MemoInfo:
        try:
            entries, scopes, size = self._db.execute(
                "SELECT COUNT(*), COUNT(DISTINCT scope), COALESCE(SUM(LENGTH(blob)), 0) FROM records").fetchone()
            runs, hits, misses, inserts = (int(x or 0) for x in self._db.execute(
                "SELECT COALESCE(SUM(runs),0), COALESCE(SUM(hits),0), COALESCE(SUM(misses),0),"
                " COALESCE(SUM(inserts),0) FROM usage").fetchone())
        except (sqlite3.DatabaseError, TypeError, ValueError) as exc:
            raise MemoError(f"{self.path}: unreadable ({exc})") from None
        return MemoInfo(str(self.path), entries, scopes, self.path.stat().st_size, hits, misses, inserts, runs)

    def clear(self) -> int:
        with self._tx():
            n = self._db.execute("DELETE FROM records").rowcount
            self._db.execute("DELETE FROM usage")
        return n

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "MemoDatabase":
        return self

    def __exit__(self, *_) -> None:
        self.close()
