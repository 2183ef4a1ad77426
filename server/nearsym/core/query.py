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
- smart case (`cased`): whether a capital was typed, so that case counts;
- the where-parts (`where`) and the name part (`name`): the text cut on
  whitespace and on the qualifier separators (`.`, `::`, `/`, `#`, `->`,
  `:`); the last part names the definition, the others where it is
  (`flask.Flask`, `sansio/app Flask`, `python PythonDomain`);
- the modifiers, fzf's and gopls's, read off the ends of the text before
  anything else: a leading `'` asks for the exact name (`exact`), a leading
  `^` (or a trailing `*`, as a glob has it) for names that start with the
  name part (`prefix`), a trailing `$` for names that end with it
  (`suffix`), and a leading `#` for types only (`types_only`; a `#` inside the text,
  `A#b`, stays a qualifier separator). They test the name part against the
  name (`accepts`), case-insensitively unless a capital is typed. A text
  that is nothing but modifiers is read as the empty query: a modifier
  alone never empties an answer.
- a trailing `**` asks the project's dependencies too (`dependencies`),
  even with the `dependencies` setting off: rust-analyzer's trailing `*`,
  doubled because a single trailing `*` is already the glob's prefix
  (`Foo*`), and a glob's `**` reaches into every folder. `Foo**` is not a
  prefix query; `Foo***` is both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nearsym.core.model import Kind
from nearsym.core.words import split_words

_QUALIFIER = re.compile(r"::|\.|#|->")
"""What separates an owner from its member in a query."""

_PARTS = re.compile(r"\s+|::|->|[.:/#]")
"""What separates the where-parts of a query from each other and from its
name part: whitespace and every qualifier separator, `/` and `:` too."""

TYPE_KINDS = frozenset({Kind.CLASS, Kind.INTERFACE, Kind.STRUCT, Kind.ENUM})
"""What a `#` query keeps: the kinds that name a type (a TypeScript `type`
alias is a class to nearsym)."""


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
    name: str = ""
    """The last part of the text (`Flask` of `flask.Flask`), as typed: what
    the where reading matches against a definition's name."""
    where: tuple[str, ...] = ()
    """The parts before the name part, lower-cased, in order (`sansio/app
    Flask` -> `sansio`, `app`); empty for a query of one part."""
    exact: bool = False
    """`'name`: only the exact name (case aside, unless a capital is typed)."""
    prefix: bool = False
    """`^name`: only names that start with the name part."""
    suffix: bool = False
    """`name$`: only names that end with the name part."""
    types_only: bool = False
    """`#name`: only types (`TYPE_KINDS`)."""
    dependencies: bool = False
    """`name**`: the project's dependencies are asked too."""
    inherited: frozenset[str] = frozenset()
    """The lower-cased names of the classes that the class named by the
    owner's last part derives from, at any depth: not typed, but resolved by
    the index (`index.where.resolve`) so that `Flask.route` reaches
    `Scaffold.route`. Empty as parsed."""

    @classmethod
    def parse(cls, typed: str) -> Query:
        dependencies = typed.rstrip().endswith("**")
        text, exact, prefix, suffix, types_only = _modifiers(
            typed.rstrip()[:-2] if dependencies else typed
        )
        compact = "".join(text.split())
        words = split_words(text)
        qualified = _QUALIFIER.search(text) is not None
        target = _QUALIFIER.sub(".", compact).strip(".") if qualified else ""
        owner, _, member = target.lower().rpartition(".")
        parts = [p for p in _PARTS.split(text) if p]
        return cls(
            text=typed,
            compact=compact,
            folded=compact.lower(),
            words=words,
            path_words=tuple(dict.fromkeys(w.lower() for w in words)),
            qualified=qualified,
            target=target,
            owner=owner,
            member=member,
            cased=compact != compact.lower(),
            name=parts[-1] if parts else "",
            where=tuple(p.lower() for p in parts[:-1]),
            exact=exact,
            prefix=prefix,
            suffix=suffix,
            types_only=types_only,
            dependencies=dependencies and bool(text),
        )

    @property
    def empty(self) -> bool:
        """Whether nothing but whitespace (and modifiers) was typed."""
        return not self.compact

    @property
    def filtered(self) -> bool:
        """Whether a modifier restricts which definitions may answer."""
        return self.exact or self.prefix or self.suffix or self.types_only

    def accepts(self, name: str, kind: Kind) -> bool:
        """Whether the modifiers let a definition of this name and kind answer
        (always, when none was typed): the name part against the name,
        case-insensitively unless a capital was typed."""
        if self.types_only and kind not in TYPE_KINDS:
            return False
        if not (self.exact or self.prefix or self.suffix):
            return True
        part = self.name
        if not self.cased:
            part, name = part.lower(), name.lower()
        if self.exact:
            return name == part
        return (not self.prefix or name.startswith(part)) and (
            not self.suffix or name.endswith(part)
        )


def _modifiers(typed: str) -> tuple[str, bool, bool, bool, bool]:
    """The text without its modifiers, and which were typed: (text, exact,
    prefix, suffix, types only). Only a text's ends hold modifiers; a text
    of modifiers alone is the empty text with none."""
    text = typed.strip()
    exact = prefix = suffix = types_only = False
    while text and text[0] in "#'^":
        if text[0] == "#":
            types_only = True
        elif text[0] == "'":
            exact = True
        else:
            prefix = True
        text = text[1:].lstrip()
    while text and text[-1] in "$*":
        suffix = suffix or text[-1] == "$"
        prefix = prefix or text[-1] == "*"
        text = text[:-1].rstrip()
    if not text:
        return "", False, False, False, False
    return text, exact, prefix, suffix, types_only
