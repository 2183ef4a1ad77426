"""The C scans (`nearsym.extract._scan`) give what their Python functions
give, on random bytes and on real sources; and the install built them."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.extract import mentions
from nearsym.extract.mentions import scan_with_numpy

ROOT = Path(__file__).resolve().parents[2]


def native_mentions() -> object:
    from nearsym.extract import _scan

    return _scan.mentions_of


def test_the_install_built_the_c_scans() -> None:
    """Every machine nearsym is tested on has a compiler and Python's
    headers, so a missing module means the build broke (pip says so only
    in its verbose log: the extension is optional)."""
    assert mentions._native is not None
    assert mentions._native is native_mentions()


# Identifier bytes, digits, the separators that end them, a NUL, and bytes
# past ASCII: every class the scan tells apart.
TEXT = st.lists(
    st.sampled_from([b"a", b"Z", b"_", b"$", b"7", b"0", b" ", b".", b"\n", b"\0", b"\xc3\xa9", b"\xff"])
    | st.binary(max_size=4)
    | st.from_regex(rb"[A-Za-z_$][A-Za-z0-9_$]{0,300}", fullmatch=True),
    max_size=40,
).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(TEXT, max_size=6))
def test_c_mentions_are_numpys_on_any_bytes(sources: list[bytes]) -> None:
    assert mentions.mentions_of(sources) == scan_with_numpy(sources)


def test_c_mentions_are_numpys_on_long_tokens_and_real_sources() -> None:
    long = [b"x" * n for n in (1, 2, 7, 8, 9, 16, 17, 255, 256, 257, 1000)]
    edges = [b" ".join(long), b"", b"a", b"ab", b"9ab", b"$$", bytes(range(256)) * 3]
    real = [p.read_bytes() for p in sorted((ROOT / "server").rglob("*.[pc]*"))]
    stdlib = Path(sys.prefix if (Path(sys.prefix) / "lib").is_dir() else sys.base_prefix)
    real += [p.read_bytes() for p in sorted(Path(stdlib, "lib").glob("python3*/[a-e]*.py"))[:40]]
    for batch in (long, edges, real):
        assert mentions.mentions_of(batch) == scan_with_numpy(batch)
    assert len(real) > 80
