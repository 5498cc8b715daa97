"""A big job's task storage in chunks: a chunk whose tasks were all dropped goes.

A streaming run's job keeps its tasks in one storage list that
:class:`sim_bridge._task_list.TaskList` views, and a done task nothing else holds becomes
None there (:func:`sim_bridge._task_list.drop_unheld`). The list itself still takes 8 bytes a
task until the job ends: on the FB-2010 day without speculation, whose live jobs hold 8.5M
tasks at 24 simulated hours, nearly all of them done and dropped, that is ~68 MB, growing
with the live work. :class:`ChunkedItems` holds the same items in lists of
:data:`CHUNK` and lets a chunk go once every item in it is None; reading an item of a chunk
that went gives None, as the list did, and setting one builds the chunk again.

Examples
--------
>>> items = ChunkedItems(list("abcdef"), chunk=2)
>>> items[0] = items[1] = None
>>> items.chunks_held, len(items), items[0], list(items)
(2, 6, None, [None, None, 'c', 'd', 'e', 'f'])
>>> items[1] = "B"
>>> items.chunks_held, items[1], list(items.iter_range(1, 4))
(3, 'B', ['B', 'c', 'd'])
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import islice, repeat
from typing import Any

__all__ = ["CHUNK", "CHUNKED_MIN_TASKS", "ChunkedItems"]

#: items a chunk holds (8 KiB of pointers)
CHUNK = 1024
#: a streaming run's job of at least this many tasks keeps them in chunks
#: (:func:`sim_bridge._task_list.set_task_lists`); a smaller one keeps a plain list
CHUNKED_MIN_TASKS = 4096


class ChunkedItems:
    """The items of a list, in chunks of ``chunk``; a chunk whose items are all None goes.

    It supports what a job's storage is asked for: ``len``, iteration, and reading and
    setting an item by its non-negative index (no slices, no insertion).

    Parameters
    ----------
    items : list
        The items (copied into the chunks; the list is not kept).
    chunk : int
        Items a chunk holds (:data:`CHUNK`).
    """

    __slots__ = ("_chunks", "_chunk", "_nones", "_n")

    def __init__(self, items: list[Any], chunk: int = CHUNK):
        if not (isinstance(chunk, int) and chunk >= 1):
            raise ValueError(f"parameter chunk must be an int >= 1, got {chunk!r}")
        n = len(items)
        self._n = n
        self._chunk = chunk
        self._chunks: list[list[Any] | None] = [items[i : i + chunk] for i in range(0, n, chunk)]
        self._nones = array("q", [c.count(None) for c in self._chunks])  # type: ignore[union-attr]
        for i, c in enumerate(self._chunks):
            if c is not None and self._nones[i] == len(c):
                self._chunks[i] = None

    def __len__(self) -> int:
        return self._n

    def _out_of_range(self, k: int) -> IndexError:
        return IndexError(f"item {k} out of range: the storage holds {self._n} items")

    def __getitem__(self, k: int) -> Any:
        if not 0 <= k < self._n:
            raise self._out_of_range(k)
        c = self._chunks[k // self._chunk]
        return None if c is None else c[k % self._chunk]

    def __setitem__(self, k: int, value: Any) -> None:  # the drop sweep's, once a done task
        if not 0 <= k < self._n:
            raise self._out_of_range(k)
        i, j = divmod(k, self._chunk)
        c = self._chunks[i]
        if c is None:  # it went: build it again, every item None
            if value is None:
                return
            c = self._chunks[i] = [None] * self._size(i)
        old = c[j]
        c[j] = value
        nones = self._nones[i] + (value is None) - (old is None)
        self._nones[i] = nones
        if nones == len(c):
            self._chunks[i] = None

    def _size(self, i: int) -> int:
        """Items chunk ``i`` holds (the last may hold fewer)."""
        return min(self._chunk, self._n - i * self._chunk)

    def __iter__(self) -> Iterator[Any]:
        return self.iter_range(0, self._n)

    def iter_range(self, lo: int, hi: int) -> Iterator[Any]:
        """The items ``lo`` to ``hi - 1`` in order, from the chunk holding ``lo`` on (a view
        of a job's second stage skips the first stage's chunks, not its items)."""
        size = self._chunk
        k = max(lo, 0)
        hi = min(hi, self._n)
        while k < hi:
            i, j = divmod(k, size)
            end = min((i + 1) * size, hi)
            c = self._chunks[i]
            if c is None:
                yield from repeat(None, end - k)
            else:
                yield from islice(c, j, j + end - k)
            k = end

    @property
    def chunks_held(self) -> int:
        """The chunks still held (some item in each is not None)."""
        return sum(c is not None for c in self._chunks)

    def __repr__(self) -> str:
        return f"ChunkedItems({self._n} items, {self.chunks_held} of {len(self._chunks)} chunks)"
