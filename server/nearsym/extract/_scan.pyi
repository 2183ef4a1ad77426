from collections.abc import Sequence

def mentions_of(sources: Sequence[bytes]) -> list[bytes]: ...

VERSION: int
FLUSH_HASH: int
FLUSH_LABEL: int
SPELLED: tuple[tuple[int, tuple[tuple[bytes, bytes], ...], bytes], ...]

def find_folds(
    source: bytes, hits: list[int], lone_brace: bool, flush: int, raw_quote: bytes
) -> list[tuple[int, int]]: ...
def spelled(source: bytes, skim: int) -> list[int]: ...
def fold_ranges(
    source: bytes, folds: list[tuple[int, int]]
) -> list[tuple[tuple[int, int], tuple[int, int], int, int]]: ...
def const_names(body: bytes, row: int) -> tuple[list[str], bytes] | None: ...
def quiet_folds(
    source: bytes, skim: int, folds: list[tuple[int, int]]
) -> list[tuple[int, int]]: ...
