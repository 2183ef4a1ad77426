from collections.abc import Sequence

def mentions_of(sources: Sequence[bytes]) -> list[bytes]: ...

VERSION: int
FLUSH_HASH: int
FLUSH_LABEL: int

def find_folds(
    source: bytes, hits: list[int], lone_brace: bool, flush: int, raw_quote: bytes
) -> list[tuple[int, int]]: ...
