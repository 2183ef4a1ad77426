"""A class's bases read from its header alone equal those read from the
whole file (`extract.bases.header_bases` against `class_bases`), and the
header is refused wherever it cannot be trusted (then the whole file is
read)."""

from __future__ import annotations

import pytest

from nearsym.extract.bases import class_bases, header_bases
from nearsym.extract.languages import language_for_path

PYTHON = b"""\
import abc


@decorator
class Plain:
    pass


class One(Base):
    x = 1

    class Inner(
        pkg.mod.Left,
        Right[int], metaclass=abc.ABCMeta,
    ):
        def method(self):
            return {1: 2}


class Two(First, Second): y = {3: 4}
"""

TYPESCRIPT = b"""\
export default class Store<T extends Base<T>> extends Map<string, T> implements Iterable<T>, Disposable {
  get(key: string): T { return super.get(key) }
}
interface Shape extends Drawable, Sized {}
abstract class Widget extends Element {}
"""

JAVA = b"""\
package p;

public class Pool<V> extends AbstractPool<V> implements Closeable, Iterable<V> {
    private static final class Entry extends Node implements Comparable<Entry> {
        public int compareTo(Entry o) { return 0; }
    }
}
"""


@pytest.mark.parametrize(
    ("path", "source"), [("a.py", PYTHON), ("a.ts", TYPESCRIPT), ("A.java", JAVA)]
)
def test_each_header_gives_the_whole_files_bases(path: str, source: bytes) -> None:
    spec = language_for_path(path)
    assert spec is not None
    whole = class_bases(source, spec)
    lines = source.split(b"\n")
    checked = 0
    for (line, name), bases in whole.items():
        assert header_bases(source, line, name, spec) == bases, (line, name)
        checked += 1
    assert checked >= 2
    # A class without bases reads as none from its header too.
    for at, text in enumerate(lines):
        if text.lstrip().startswith(b"class Plain"):
            assert header_bases(source, at, "Plain", spec) == ()


def test_headers_that_cannot_be_trusted_are_refused() -> None:
    spec = language_for_path("a.py")
    assert spec is not None
    # A comment in the header (its brackets may lie), something else before
    # the class on its line, a header with no end: the whole file decides.
    assert header_bases(b"class A(B,  # (\n  C):\n  pass\n", 0, "A", spec) is None
    assert header_bases(b"if x: class A(B): pass\n", 0, "A", spec) is None
    assert header_bases(b"class A(B, C" + b" " * 5000, 0, "A", spec) is None
    assert header_bases(b"class A(B):\n", 7, "A", spec) is None  # no such line
    go = language_for_path("a.go")
    assert go is not None  # Go's embedded types are in the body: never a header alone
    assert header_bases(b"package p\ntype T struct { Reader }\n", 1, "T", go) is None
