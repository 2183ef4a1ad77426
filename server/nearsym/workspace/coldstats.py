"""What a cold index did: files, definitions and time, per language
(`nearsym index --stats`, the server's log, `nearsym bench`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from nearsym.core.filedefs import KIND_MASK
from nearsym.core.model import Kind
from nearsym.workspace.discovery import WalkReport


@dataclass(slots=True)
class LanguageStats:
    """One language's share of a cold index (`nearsym index --stats`)."""

    files: int = 0
    """Files indexed: parsed, or read from the cache."""
    skipped: int = 0
    """Files skipped (too large, binary, minified) or gone when read."""
    definitions: int = 0
    seconds: float = 0.0
    """Seconds reading and parsing its files in this process (what a pool
    worker parses is not timed per language)."""
    kind_bytes: Counter[int] = field(default_factory=Counter)
    """Definitions per kind byte (`filedefs.kind_byte`)."""

    @property
    def kinds(self) -> Counter[str]:
        """Definitions per kind, by label (`function`, `class`, ...)."""
        out: Counter[str] = Counter()
        for byte, count in self.kind_bytes.items():
            out[Kind(byte & KIND_MASK).label] += count
        return out


@dataclass(slots=True)
class ColdStats:
    files: int = 0
    parsed: int = 0
    from_cache: int = 0
    skipped: int = 0
    definitions: int = 0
    from_snapshot: int = 0
    parsed_ok: int = 0
    """Files parsed that yielded definitions (not skipped or gone)."""
    parsed_held: int = 0
    """Of those, the files the snapshot then brought as they were: a
    restart parses the open file's folder before a large snapshot, and
    the snapshot's rows replace what it parsed."""
    newly_skipped: int = 0
    """Files read and skipped (too large, binary, too broken) that the
    index did not know as skipped at that stamp."""
    passed_over: int = 0
    """Files not read: the index knew them as skipped at their stamp."""
    first_batch_seconds: float | None = None
    seconds: float = 0.0
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)
    """(size, mtime_ns) of every file indexed, as read: the snapshot's keys."""
    languages: dict[str, LanguageStats] = field(default_factory=dict)
    """Per language, the files parsed or read from the cache file by file
    (a snapshot's files are not counted)."""
    walk: WalkReport = field(default_factory=WalkReport)
    """What the walk kept and what ignore rules dropped."""

    @property
    def changed(self) -> bool:
        """Whether the index holds anything the cache's snapshot does not:
        files parsed that the snapshot did not bring as they are, loaded
        file by file, or skipped where it did not know it (then a new
        snapshot is due). A restart of the Linux kernel wrote its 284 MB
        snapshot again (2.2 s of the disk thread, while the first queries
        ran) for the open folder's files it had parsed, which the snapshot
        held unchanged."""
        return self.parsed_ok - self.parsed_held + self.from_cache + self.newly_skipped > 0
