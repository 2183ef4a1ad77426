"""How many files of an index mention each name.

Design note
-----------
A prior for the ranking among name ties (`RankPolicy.mentions`): a name
many files mention is the one people mean. Each file's mentions arrive
with its definitions (`FileDefs.mentions`: the sorted 32-bit keys of its
distinct identifiers, `extract.mentions`); the index keeps, per key, the
number of files mentioning it, never the files' lists for long:

- a *base*: sorted keys and their counts (`uint32` and `uint16`,
  saturating), six bytes per key;
- the lists of the files added since the base was last folded, exactly, so
  that a file replaced again (an editor saving it) or removed is counted
  once, not once per version. When those lists hold `FOLD_KEYS` keys, they
  are folded into the base and forgotten.

A file's mentions folded into the base stay counted after it is replaced
or removed: a name's count can be too high by the number of such files
that mention it (a file edited many times is counted at most twice, its
folded version and its newest). A cold index ends by dropping every key
that names no definition of the index (`prune`), so the base holds about
one count per distinct definition name. Pruning reads every definition
name; it is skipped while the keys added since the last prune are few
(`PRUNE_SHARE`), as on a restart from a snapshot that re-parsed a few
files: such keys cost memory only, never a count. A snapshot keeps how
many keys were added since the last prune, so skipped prunes never add
up over restarts.

The counts are read per query for the pool's distinct names at once
(`counts`): one vectorised lookup in the base, one in the folded lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice

import numpy as np
from numpy.typing import NDArray

from nearsym.extract.mentions import name_keys_of
from nearsym.index.encoding import sorted_unique

U16_MAX = 65_535
FOLD_KEYS = 262_144
"""Keys held per file before they are folded into the base: consolidating
them (after each change, on the next query) stays near 10 ms, and folding
is a merge of two sorted arrays."""

PRUNE_SHARE = 8
"""`prune` does nothing while the keys added to the base since it was last
pruned (or installed from a snapshot) are fewer than 1/PRUNE_SHARE of it:
they cost six bytes each, at most an eighth more; the walk over every
definition name costs about 50 ms of CPU on the Go standard library's
111,000 names, measured in process, and grows with the index."""

_EMPTY_KEYS: NDArray[np.uint32] = np.zeros(0, dtype=np.uint32)
_EMPTY_COUNTS: NDArray[np.uint16] = np.zeros(0, dtype=np.uint16)


def name_keys(names: Iterable[str]) -> NDArray[np.uint32]:
    """The sorted distinct keys of `names`."""
    # A slice at a time: the Linux kernel's 3 million names encoded at once
    # would hold 150 MB of `bytes` objects.
    it = iter(names)
    parts = [_EMPTY_KEYS]
    while chunk := list(islice(it, 65_536)):
        parts.append(name_keys_of(chunk))
    keys = np.concatenate(parts)
    # By sorting: numpy 2's hashing `unique` took seconds on the Linux
    # kernel's 3 million names.
    return sorted_unique(keys)  # type: ignore[no-any-return]


def _tally(lists: Sequence[NDArray[np.uint32]]) -> tuple[NDArray[np.uint32], NDArray[np.int64]]:
    if not lists:
        return _EMPTY_KEYS, np.zeros(0, dtype=np.int64)
    keys, counts = np.unique(np.concatenate(lists), return_counts=True)
    return keys.astype(np.uint32), counts.astype(np.int64)


class MentionCounts:
    """Files mentioning each name key, for one index (see the module note)."""

    def __init__(self) -> None:
        self._keys: NDArray[np.uint32] = _EMPTY_KEYS
        self._counts: NDArray[np.uint16] = _EMPTY_COUNTS
        self._files: dict[str, NDArray[np.uint32]] = {}
        self._held = 0
        self._recent: tuple[NDArray[np.uint32], NDArray[np.int64]] | None = None
        self._unpruned = 0
        """Keys added to the base since it was last pruned or installed."""

    @property
    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._counts.nbytes) + 4 * self._held

    def add(self, path: str, mentions: bytes) -> None:
        """`path` now mentions the keys `mentions` (replacing what it did)."""
        self.remove(path)
        if not mentions:
            return
        keys = np.frombuffer(mentions, dtype=np.uint32)
        self._files[path] = keys
        self._held += len(keys)
        self._recent = None
        if self._held >= FOLD_KEYS:
            self.fold()

    def remove(self, path: str) -> None:
        old = self._files.pop(path, None)
        if old is not None:
            self._held -= len(old)
            self._recent = None

    def fold(self) -> None:
        """Add the files' lists to the base and forget them."""
        keys, counts = self._recent_tally()
        self._files.clear()
        self._held = 0
        self._recent = None
        self._merge(keys, counts)

    def _merge(self, keys: NDArray[np.uint32], counts: NDArray[np.int64]) -> None:
        """Add `counts` of the distinct `keys` (sorted) to the base. Each key
        is found at most once, so the base's counts are added to in place;
        only the keys it lacks are inserted (a cold index of the Linux
        kernel folds some 60 times into a base of 3 million keys)."""
        if not len(keys):
            return
        at = np.searchsorted(self._keys, keys)
        hit = at < len(self._keys)
        hit[hit] = self._keys[at[hit]] == keys[hit]
        old = at[hit]
        if len(old):
            if not self._counts.flags.writeable:  # a snapshot's view
                self._counts = self._counts.copy()
            added = self._counts[old].astype(np.int64) + counts[hit]
            self._counts[old] = np.minimum(added, U16_MAX)
        new = ~hit
        fresh = int(np.count_nonzero(new))
        if fresh:
            self._unpruned += fresh
            where = at[new]
            self._keys = np.insert(self._keys, where, keys[new])
            self._counts = np.insert(
                self._counts, where, np.minimum(counts[new], U16_MAX).astype(np.uint16)
            )

    def prune(self, names: Iterable[str]) -> None:
        """Fold, then keep only the keys of `names` (the index's definition
        names: no other name is ever looked up); nothing while few keys were
        added since the last prune (`PRUNE_SHARE`), `names` not even read."""
        if self.prune_due():
            self.prune_to(name_keys(names))

    def prune_due(self) -> bool:
        """Fold; whether enough keys were added since the last prune for
        `prune_to` to be worth its walk over every definition name."""
        self.fold()
        return self._unpruned * PRUNE_SHARE >= len(self._keys)

    def prune_to(self, wanted: NDArray[np.uint32]) -> None:
        """Fold, then keep only the keys in `wanted` (sorted, distinct:
        `name_keys` of the index's definition names)."""
        self.fold()
        self._unpruned = 0
        keep = np.isin(self._keys, wanted, assume_unique=True)
        self._keys = self._keys[keep]
        self._counts = self._counts[keep]

    def _recent_tally(self) -> tuple[NDArray[np.uint32], NDArray[np.int64]]:
        if self._recent is None:
            self._recent = _tally(list(self._files.values()))
        return self._recent

    def counts(self, names: Sequence[str]) -> list[int]:
        """Files mentioning each of `names` (0 for a name none mentions)."""
        if not names:
            return []
        keys = name_keys_of(names)
        out = np.zeros(len(names), dtype=np.int64)
        for table, values in (self._recent_tally(), (self._keys, self._counts)):
            if not len(table):
                continue
            at = np.minimum(np.searchsorted(table, keys), len(table) - 1)
            hit = table[at] == keys
            out[hit] += values[at[hit]].astype(np.int64)
        return [int(c) for c in out.tolist()]

    # -- snapshots -----------------------------------------------------------------
    def to_parts(self) -> dict[str, bytes | memoryview]:
        """The counts (folded) as a snapshot's parts."""
        self.fold()
        return {  # views: the arrays are replaced, never written to
            "mention_keys": np.ascontiguousarray(self._keys).data.cast("B"),
            "mention_counts": np.ascontiguousarray(self._counts).data.cast("B"),
            "mention_unpruned": self._unpruned.to_bytes(8, "little"),
        }

    def install(self, parts: dict[str, bytes]) -> None:
        """Add a snapshot's counts (`to_parts`). Raises ValueError on parts
        that do not fit together."""
        keys = np.frombuffer(parts.get("mention_keys", b""), dtype=np.uint32)
        counts = np.frombuffer(parts.get("mention_counts", b""), dtype=np.uint16)
        if len(keys) != len(counts) or (len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1]))):
            raise ValueError("snapshot mention counts disagree")
        unpruned = self._unpruned
        self._merge(keys.astype(np.uint32), counts.astype(np.int64))
        # The snapshot's base was pruned but for the keys it says were added since.
        self._unpruned = unpruned + int.from_bytes(parts.get("mention_unpruned", b""), "little")
