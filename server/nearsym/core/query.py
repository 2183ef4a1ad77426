"""The query as typed, read once.

A query enters at one place (`nearsym.index.search`, which the server, the
command line and the evaluation share) and is parsed there into a `Query`;
retrieval, the name score, the path score and `explain()` read its fields
and never split or join the text again.

Readings, with the fields that hold them:

- the whole text with its whitespace removed (`compact`): `search document`
  is matched as `searchdocument`, and word by word (`words`);
- a qualified query (`qualified`): `Owner.member`, `pkg::name`, `A#b`,
  `a->b` name an owner and a member; `target` spells it with dots
  (`A.b`), and `owner` / `member` are its lower-cased parts for retrieval
  (`Outer.Inner.m` -> `outer.inner`, `m`);
- the query's distinct lower-cased words (`path_words`), which the path
  evidence looks for among the segments of a definition's path;
- smart case (`cased`): whether a capital was typed, so that case counts.

Modifiers (`'exact`, `^prefix`, `suffix$`, a kind filter) have no reading
yet: their characters are part of the text like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nearsym.core.words import split_words

_QUALIFIER = re.compile(r"::|\.|#|->")
"""What separates an owner from its member in a query."""


@dataclass(frozen=True, slots=True)
class Query:
    """A query parsed once; build it with `Query.parse`."""

    text: str
    """As typed."""
    compact: str
    """The text without whitespace; empty for an empty (or blank) query."""
    folded: str
    """`compact` lower-cased: what retrieval looks up."""
    words: tuple[str, ...]
    """The words of the text (`words.split_words`), in order, as typed."""
    path_words: tuple[str, ...]
    """The distinct words, lower-cased, first occurrence first."""
    qualified: bool
    """Whether the text names an owner (`Class.method`, `pkg::name`, `A#b`)."""
    target: str
    """A qualified query with its separators as dots and no leading or
    trailing dot (`A::b` -> `A.b`), as typed; empty when not qualified."""
    owner: str
    """The lower-cased part of `target` before its last dot (may be empty)."""
    member: str
    """The lower-cased part of `target` after its last dot."""
    cased: bool
    """Whether a capital was typed (smart case applies)."""

    @classmethod
    def parse(cls, text: str) -> Query:
        compact = "".join(text.split())
        words = split_words(text)
        qualified = _QUALIFIER.search(text) is not None
        target = _QUALIFIER.sub(".", compact).strip(".") if qualified else ""
        owner, _, member = target.lower().rpartition(".")
        return cls(
            text=text,
            compact=compact,
            folded=compact.lower(),
            words=words,
            path_words=tuple(dict.fromkeys(w.lower() for w in words)),
            qualified=qualified,
            target=target,
            owner=owner,
            member=member,
            cased=compact != compact.lower(),
        )

    @property
    def empty(self) -> bool:
        """Whether nothing but whitespace was typed."""
        return not self.compact
