"""Whether a SQLite database in WAL mode has had a commit, read without a query.

Every commit, by any connection in any process, rewrites the WAL-index header at the start of
the database's `-shm` file (https://www.sqlite.org/walformat.html: a change counter, the last
valid frame and the salts). The file is shared memory, so mapping it and copying its first bytes
costs no system call, where even the cheapest SELECT starts a read transaction with file locks.
Equal stamps mean nothing was committed in between; anything unclear (no `-shm` file yet, a
header being rewritten) gives no stamp, and the caller asks the database instead.
"""

from __future__ import annotations

import mmap
import os
import threading

HEADER_BYTES = 48  # one copy of the WAL-index header; the writer keeps a second copy right after


class WalStamp:
    def __init__(self, database_path: str) -> None:
        self._shm_path = f"{database_path}-shm"
        self._map: mmap.mmap | None = None
        self._lock = threading.Lock()

    def current(self) -> bytes | None:
        view = self._map or self._open()
        if view is None:
            return None
        both = view[: 2 * HEADER_BYTES]
        first, second = both[:HEADER_BYTES], both[HEADER_BYTES:]
        # SQLite writes the second copy, then the first; equal copies are a settled header.
        return first if first == second and any(first) else None

    def _open(self) -> mmap.mmap | None:
        # Mapped only once SQLite has sized the file; it never shrinks while this process holds
        # a connection to the database (only the first connection to open it resets it).
        with self._lock:
            if self._map is None:
                try:
                    fd = os.open(self._shm_path, os.O_RDONLY)
                except OSError:
                    return None
                try:
                    if os.fstat(fd).st_size >= 2 * HEADER_BYTES:
                        self._map = mmap.mmap(fd, 2 * HEADER_BYTES, prot=mmap.PROT_READ)
                finally:
                    os.close(fd)
            return self._map

    def close(self) -> None:
        with self._lock:
            if self._map is not None:
                self._map.close()
                self._map = None
