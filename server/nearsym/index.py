"""The in-memory index of one namespace (one workspace folder).

Design note
-----------
The index keeps each file's definitions and two name tables over them: one
keyed by the lower-cased name, one by the lower-cased qualified name
(`container.name`). A table holds its distinct keys sorted, and the same keys
joined into one newline-separated string, so that the scans below run inside
C (`str.find`, `re.finditer`) instead of a Python loop per name.

Candidate retrieval returns a *pool* in the index's own order, the retrieval
rank, in tiers that mirror how strongly a name answers the query:

1. exact names (all of them, even past the pool width: an exact match is
   never lost),
2. names starting with the query (bisect over the sorted keys),
3. names containing it (`str.find` over the joined keys),
4. names containing it as an ordered subsequence (one regex over the keys),
5. qualified names containing it as a subsequence (a method found by its
   owner's name).

Inside a tier, shorter names come first, then alphabetical; a name's
definitions come in path then line order. A qualified query (`App.run`)
searches the qualified table only. The empty query returns the definitions of
the files nearest the open file.

Updating a file whose names are already known only touches the per-name
lists; the sorted keys and joined string are rebuilt lazily, on the next
query, and only when a key appeared or disappeared.

What this does not do yet: compact columns for millions of symbols, and a
trigram index for subsequence queries at that scale (issue 5).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Iterator

from nearsym.match import is_qualified, is_subsequence, normalise_qualified
from nearsym.model import Symbol
from nearsym.proximity import directory_distance


class _NameTable:
    """Definitions by a lower-cased key, with the keys sorted and joined.

    The sorted keys and the joined string are rebuilt only when the keys
    added since the last build outnumber a tenth of the table (at least
    `RECENT_MIN`): until then new keys wait in `_recent` and each scan reads
    them too, and removed keys are skipped where they are met. So an edit
    costs no rebuild, and a bulk index rebuilds O(log n) times.
    """

    RECENT_MIN = 4096

    def __init__(self) -> None:
        self.by_key: dict[str, list[Symbol]] = {}
        self._keys: list[str] = []
        self._blob = "\n"
        self._offsets: list[int] = []
        self._recent: set[str] = set()
        self._counts: dict[str, int] = {}

    def add(self, key: str, symbol: Symbol) -> None:
        bucket = self.by_key.get(key)
        if bucket is None:
            self.by_key[key] = [symbol]
            if not self._built(key):
                self._recent.add(key)
        else:
            bucket.append(symbol)

    def discard(self, key: str, symbol: Symbol) -> None:
        bucket = self.by_key.get(key)
        if bucket is None:
            return
        try:
            bucket.remove(symbol)
        except ValueError:
            return
        if not bucket:
            del self.by_key[key]
            self._recent.discard(key)

    def _built(self, key: str) -> bool:
        i = bisect.bisect_left(self._keys, key)
        return i < len(self._keys) and self._keys[i] == key

    def _fresh(self) -> None:
        stale = len(self._keys) - (len(self.by_key) - len(self._recent))
        if len(self._recent) > max(self.RECENT_MIN, len(self._keys) // 10) or (
            stale > max(self.RECENT_MIN, len(self._keys) // 2)
        ):
            keys = sorted(self.by_key)
            self._keys = keys
            self._blob = "\n" + "\n".join(keys) + "\n"
            offsets = []
            at = 1
            for k in keys:
                offsets.append(at)
                at += len(k) + 1
            self._offsets = offsets
            self._recent = set()
            self._counts = {}

    def _key_at(self, position: int) -> str:
        i = bisect.bisect_right(self._offsets, position) - 1
        return self._keys[i]

    def _live(self, keys: Iterable[str]) -> Iterator[str]:
        by_key = self.by_key
        return (k for k in keys if k in by_key)

    def exact(self, key: str) -> list[str]:
        return [key] if key in self.by_key else []

    def with_prefix(self, prefix: str) -> Iterator[str]:
        self._fresh()
        keys = self._keys
        i = bisect.bisect_left(keys, prefix)

        def built() -> Iterator[str]:
            j = i
            while j < len(keys) and keys[j].startswith(prefix):
                yield keys[j]
                j += 1

        yield from self._live(built())
        yield from sorted(k for k in self._recent if k.startswith(prefix))

    def containing(self, text: str) -> Iterator[str]:
        self._fresh()
        blob = self._blob

        def built() -> Iterator[str]:
            at = blob.find(text, 1)
            while at >= 0:
                key = self._key_at(at)
                yield key
                at = blob.find(text, blob.find("\n", at))  # next key, not the same again

        yield from self._live(built())
        yield from sorted(k for k in self._recent if text in k)

    def ending_with(self, suffix: str) -> Iterator[str]:
        """Keys equal to `suffix` or ending with `.suffix`."""
        yield from self.exact(suffix)
        self._fresh()
        pattern = re.compile(re.escape("." + suffix) + r"\n")
        yield from self._live(self._key_at(m.start()) for m in pattern.finditer(self._blob))
        yield from sorted(k for k in self._recent if k.endswith("." + suffix))

    def _count(self, ch: str) -> int:
        """How often `ch` occurs in the built keys (cached per build)."""
        found = self._counts.get(ch)
        if found is None:
            found = self._counts[ch] = self._blob.count(ch)
        return found

    def subsequence(self, text: str) -> Iterator[str]:
        """Keys holding `text` as an ordered subsequence, in key order.

        The keys that can match all contain the query's rarest character, so
        the scan jumps (`str.find`, in C) from one occurrence of that
        character to the next and tests only those keys, each in linear time
        (a `a.*?b.*?c` regex backtracks exponentially on long keys that
        almost match: 2 s for `test_no_delete` over CPython's names). A query's rarest character is usually rare: on 600,000
        names this reads a few thousand keys instead of all of them.
        """
        self._fresh()
        rare = min(set(text), key=self._count)

        def scan(blob: str) -> Iterator[str]:
            at = blob.find(rare, 1)
            while at >= 0:
                start = blob.rfind("\n", 0, at) + 1
                end = blob.find("\n", at)
                key = blob[start:end]
                if is_subsequence(text, key):  # linear; a lazy regex backtracks badly
                    yield key
                at = blob.find(rare, end)

        yield from self._live(scan(self._blob))
        if self._recent:
            yield from scan("\n" + "\n".join(sorted(self._recent)) + "\n")


TIER_SCAN = 10_000
"""A tier (prefix, substring, subsequence) is read until it holds this many
names (20 widest pools), then sorted shortest first: enough for the
reranker, and a one-letter query does not walk a million names. The cap does
not depend on the pool width, so a narrower pool stays a prefix of a wider
one (paging)."""


def _first(keys: Iterable[str], width: int) -> list[str]:
    del width  # the same cap for every width: see TIER_SCAN
    out: list[str] = []
    cap = TIER_SCAN
    for key in keys:
        out.append(key)
        if len(out) >= cap:
            break
    return out


def _by_length(keys: Iterable[str]) -> list[str]:
    return sorted(set(keys), key=lambda k: (len(k), k))


class SymbolIndex:
    """Definitions of one workspace folder, replaceable a file at a time.

    Invariant: the name tables hold exactly the symbols of `_files`; every
    mutation goes through `replace_file` / `remove_file`.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self._files: dict[str, tuple[Symbol, ...]] = {}
        self._names = _NameTable()
        self._qualified = _NameTable()
        self.generation = 0
        """Bumped by every change, so caches derived from the index can tell
        they are stale."""

    def __len__(self) -> int:
        return sum(len(s) for s in self._files.values())

    def __contains__(self, path: str) -> bool:
        return path in self._files

    @property
    def files(self) -> list[str]:
        return list(self._files)

    def symbols_of(self, path: str) -> tuple[Symbol, ...]:
        return self._files.get(path, ())

    def all_symbols(self) -> Iterator[Symbol]:
        for symbols in self._files.values():
            yield from symbols

    def replace_file(self, path: str, symbols: Iterable[Symbol]) -> None:
        """Make `symbols` the definitions of `path` (relative), dropping the old."""
        self.remove_file(path)
        self.generation += 1
        fresh = tuple(symbols)
        self._files[path] = fresh
        for s in fresh:
            self._names.add(s.name.lower(), s)
            if s.container:
                self._qualified.add(s.qualified_name.lower(), s)

    def remove_file(self, path: str) -> None:
        if path in self._files:
            self.generation += 1
        old = self._files.pop(path, None)
        if not old:
            return
        for s in old:
            self._names.discard(s.name.lower(), s)
            if s.container:
                self._qualified.discard(s.qualified_name.lower(), s)

    def candidates(self, query: str, width: int, open_file: str | None = None) -> list[Symbol]:
        """The candidate pool for `query`, in retrieval order.

        At most `width` rows, except that every exact name match is included
        whatever the width (they come first). An empty query returns the
        definitions of the files nearest `open_file` (absolute path), or of
        all files in path order when none is open.
        """
        text = "".join(query.split()).lower()
        if not text:
            return self._nearest(open_file, width)
        if is_qualified(query):
            wanted = normalise_qualified(query).strip(".").lower()
            if not wanted:
                return []
            q = self._qualified
            tiers: list[tuple[_NameTable, Callable[[], list[str]]]] = [
                (q, lambda: _by_length(q.ending_with(wanted))),
                (q, lambda: _by_length(_first(q.containing(wanted), width))),
                (q, lambda: _by_length(_first(q.subsequence(wanted), width))),
            ]
            return self._fill(tiers, width, exact_tiers=1)
        n = self._names
        tiers = [
            (n, lambda: n.exact(text)),
            (n, lambda: _by_length(_first(n.with_prefix(text), width))),
            (n, lambda: _by_length(_first(n.containing(text), width))),
            (n, lambda: _by_length(_first(n.subsequence(text), width))),
        ]
        pool = self._fill(tiers, width, exact_tiers=1)
        if len(pool) < width:
            owners = _by_length(_first(self._qualified.subsequence(text), width))
            seen = {id(s) for s in pool}
            for key in owners:
                for s in _sorted_bucket(self._qualified.by_key[key]):
                    if len(pool) >= width:
                        return pool
                    if id(s) not in seen:
                        pool.append(s)
                        seen.add(id(s))
        return pool

    @staticmethod
    def _fill(
        tiers: list[tuple[_NameTable, Callable[[], list[str]]]], width: int, exact_tiers: int
    ) -> list[Symbol]:
        pool: list[Symbol] = []
        seen_keys: set[tuple[int, str]] = set()
        exact = 0
        for number, (table, tier) in enumerate(tiers):
            if number >= exact_tiers and len(pool) >= width:
                break
            for key in tier():
                if (id(table), key) in seen_keys:
                    continue
                seen_keys.add((id(table), key))
                if number >= exact_tiers and len(pool) >= width:
                    break
                bucket = _sorted_bucket(table.by_key[key])
                pool.extend(bucket)
                if number < exact_tiers:
                    exact += len(bucket)
        # Invariant: every exact match is kept; otherwise exactly `width` rows
        # at most, so that a narrower pool is a prefix of a wider one.
        return pool[: max(width, exact)]

    def _nearest(self, open_file: str | None, width: int) -> list[Symbol]:
        if open_file is None:
            order = sorted(self._files)
        else:

            def distance(path: str) -> tuple[int, int, str]:
                file = os.path.join(self.root, *path.split("/"))
                same = 0 if os.path.normpath(file) == os.path.normpath(open_file) else 1
                return (same, directory_distance(file, open_file), path)

            order = sorted(self._files, key=distance)
        pool: list[Symbol] = []
        for path in order:
            pool.extend(self._files[path])
            if len(pool) >= width:
                return pool[:width]
        return pool


def _sorted_bucket(symbols: list[Symbol]) -> list[Symbol]:
    return sorted(symbols, key=lambda s: (s.path, s.span.line, s.span.col))
