from collections.abc import Sequence

VERSION: int

def align_ascii(
    typed: str,
    names: Sequence[str],
    smart: bool,
    points: tuple[int, int, int, int, int, int, int, int, int, float, float, float],
    separators: bytes,
) -> tuple[bytearray, bytearray, bytearray, list[int]]: ...
