"""Ignore rules: which files `.gitignore`, `.ignore` and git's exclude files
take out of a walk, and which rule did it.

Design note
-----------
The rules are git's (gitignore(5)), applied where git and ripgrep apply them:

- `.gitignore`, `.git/info/exclude` and the global excludes file
  (`core.excludesFile`, by default `$XDG_CONFIG_HOME/git/ignore`) count only
  inside a git repository: a folder with a `.git` folder or file at or
  above it (what ripgrep checks). A tarball or a copied folder whose
  `.gitignore` was written for a repository it is no longer in is indexed
  whole; the `requireGit` setting set to false applies them everywhere.
  A workspace folder inside a repository follows the repository's ignore
  files above it, from the repository's top down.
- `.ignore` applies everywhere (ripgrep's and fd's file), and any `.ignore`
  match outranks any git rule; among files of one kind the deepest decides,
  and in one file the last matching line.
- The global excludes file is found by reading git's configuration files
  (system, global, the repository's own; `[include]` is not followed), not
  by running git.

Matching never backtracks exponentially. A pattern is cut at its `/` into
segments, and a segment at its `*`s into chunks of fixed length (literals,
`?`, classes); every chunk but the last is matched at its earliest place
(an atomic group, so the regex engine never returns to try another), which
is always right when what follows starts with a star; the same argument
holds one level up for `**` over whole segments. A line costs at most its
length times the path's, whatever it says (a `*a*a*a*a*b` line against a
long name, or `**/**/**/x` against a deep path, both pin a backtracking
matcher for minutes).

A line git would not match anything with (a trailing lone `\\`, an
unclosed `[`, a range such as `[z-a]`, an unknown `[:class:]`) is reported
once, naming its file and line, and skipped; the rest of its file applies.

Not handled: `core.ignoreCase` (matching is case-sensitive, as git's
default on Linux), and `GIT_DIR` / `GIT_CEILING_DIRECTORIES`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nearsym.index.files import SkippedFile, read_regular
from nearsym.workspace.repository import Repository, excludes_file, find_repository, repository_at

log = logging.getLogger(__name__)

MAX_RULE_FILE_BYTES = 1 << 20
"""An ignore file is read up to 1 MiB (the Linux kernel's largest is 5 kB);
the rest is left out with a warning."""
CHUNK_RULES = 200
"""Basename rules joined into one regex at a time: one call of the regex
engine tests them all (the kernel's 150-line `.gitignore` against 70,000
names), and the joined pattern stays quick to compile."""

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class PatternError(ValueError):
    """A line git would never match anything with."""


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    """One line of an ignore file."""

    source: str
    """The file it came from, as shown to a person (`.gitignore`,
    `src/.gitignore`, `.git/info/exclude`, `~/.config/git/ignore`)."""
    line: int
    text: str
    negated: bool
    dir_only: bool
    segments: tuple[re.Pattern[str] | str | None, ...]
    """The pattern cut at `/`: a literal, a compiled segment glob, or None
    for `**`. A pattern without a `/` is one segment matched against a
    name at any depth."""
    anchored: bool

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.text}"

    def matches(self, parts: list[str], is_dir: bool) -> bool:
        """Whether the path `parts` (relative to the rule's folder) matches."""
        if self.dir_only and not is_dir:
            return False
        if not self.anchored:
            return _segment_matches(self.segments[0], parts[-1])
        return _path_matches(self.segments, parts)


def _segment_matches(segment: re.Pattern[str] | str | None, name: str) -> bool:
    if segment is None:
        return True
    if isinstance(segment, str):
        return segment == name
    return segment.fullmatch(name) is not None


def _path_matches(segments: tuple[re.Pattern[str] | str | None, ...], parts: list[str]) -> bool:
    """`**`-aware matching over whole segments: the chunks between `**`s
    are placed at their earliest fit, the last one at the end."""
    chunks: list[list[re.Pattern[str] | str]] = [[]]
    for segment in segments:
        if segment is None:
            chunks.append([])
        else:
            chunks[-1].append(segment)

    def fits(chunk: list[re.Pattern[str] | str], at: int) -> bool:
        return all(_segment_matches(s, parts[at + i]) for i, s in enumerate(chunk))

    if len(chunks) == 1:
        return len(parts) == len(chunks[0]) and fits(chunks[0], 0)
    first, *middle, last = chunks
    if len(parts) < len(first) + len(last) or not fits(first, 0):
        return False
    at, end = len(first), len(parts) - len(last)
    for chunk in middle:
        while at + len(chunk) <= end and not fits(chunk, at):
            at += 1
        if at + len(chunk) > end:
            return False
        at += len(chunk)
    return fits(last, end)


def _class(pattern: str, at: int) -> tuple[str, int]:
    """The regex of the bracket expression opening at `pattern[at]`, and
    where it ends."""
    i = at + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while True:
        if i >= len(pattern):
            raise PatternError("unclosed [")
        c = pattern[i]
        if c == "]" and not first:
            break
        first = False
        if c == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end != -1:
                name = pattern[i + 2 : end]
                if name not in _POSIX_CLASSES:
                    raise PatternError(f"unknown class [:{name}:]")
                items.append(_POSIX_CLASSES[name])
                i = end + 2
                continue
        if c == "\\":
            i += 1
            if i >= len(pattern):
                raise PatternError("unclosed [")
            c = pattern[i]
        i += 1
        if i + 1 < len(pattern) and pattern[i] == "-" and pattern[i + 1] != "]":
            high = pattern[i + 1]
            i += 2
            if high == "\\":
                if i >= len(pattern):
                    raise PatternError("unclosed [")
                high = pattern[i]
                i += 1
            if high < c:
                raise PatternError(f"invalid range {c}-{high}")
            items.append(f"{re.escape(c)}-{re.escape(high)}")
        else:
            items.append(re.escape(c))
    return ("[^" if negate else "[") + "".join(items) + "]", i + 1


def _segment(glob: str) -> re.Pattern[str] | str:
    """A literal, or the regex of one segment's glob: fixed-length chunks
    between `*`s, every middle one atomic at its earliest place."""
    chunks: list[str] = [""]
    plain: list[str] = []
    literal = True
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            literal = False
            chunks.append("")
            while i < len(glob) and glob[i] == "*":
                i += 1
            continue
        if c == "?":
            literal = False
            chunks[-1] += "."
        elif c == "[":
            literal = False
            regex, i = _class(glob, i)
            chunks[-1] += regex
            continue
        else:
            if c == "\\":
                i += 1
                if i >= len(glob):
                    raise PatternError("trailing \\")
                c = glob[i]
            chunks[-1] += re.escape(c)
            plain.append(c)
        i += 1
    if literal:
        return "".join(plain)
    if len(chunks) == 1:
        return re.compile(chunks[0], re.DOTALL)
    head, *middle, tail = chunks
    body = head + "".join(f"(?>.*?{m})" for m in middle if m) + ".*" + tail
    return re.compile(body, re.DOTALL)


def parse_line(text: str, source: str, line: int) -> Rule | None:
    """One line of an ignore file as a rule; None for a blank line or a
    comment. Raises PatternError for a line that can match nothing."""
    pattern = text
    # Trailing spaces go, unless escaped.
    stripped = pattern.rstrip(" ")
    if stripped != pattern and stripped.endswith("\\") and not stripped.endswith("\\\\"):
        stripped += " "
    pattern = stripped
    if not pattern or pattern.startswith("#"):
        return None
    negated = pattern.startswith("!")
    if negated:
        pattern = pattern[1:]
    dir_only = pattern.endswith("/") and not pattern.endswith("\\/")
    if dir_only:
        pattern = pattern.rstrip("/")
    if not pattern:
        return None
    anchored = "/" in pattern
    pieces = pattern.lstrip("/").split("/") if anchored else [pattern]
    if anchored and pieces and pieces[-1] == "**":
        pieces[-1:] = ["*", "**"]  # `a/**`: everything inside a, not a itself
    segments = tuple(None if piece == "**" else _segment(piece) for piece in pieces if piece)
    if not anchored and segments == (None,):
        segments = (re.compile(".*", re.DOTALL),)
    return Rule(source, line, text, negated, dir_only, segments, anchored)


_reported: set[tuple[str, int, str]] = set()
_reported_lock = threading.Lock()


def report_once(key: tuple[str, int, str], message: str) -> bool:
    """Log `message` the first time `key` is seen in this process."""
    with _reported_lock:
        if key in _reported:
            return False
        _reported.add(key)
    log.warning("%s", message)
    return True


def parse_rules(
    lines: Iterable[str], source: str, problems: list[str] | None = None
) -> tuple[Rule, ...]:
    """The rules of an ignore file; a bad line is reported (once per
    process, and into `problems`) and skipped."""
    rules: list[Rule] = []
    for number, text in enumerate(lines, 1):
        try:
            rule = parse_line(text, source, number)
        except PatternError as error:
            message = f"nearsym: {source}:{number}: {text!r} skipped: {error}"
            report_once((source, number, text), message)
            if problems is not None:
                problems.append(message)
            continue
        if rule is not None:
            rules.append(rule)
    return tuple(rules)


class RuleFile:
    """The rules of one ignore file, and where they apply.

    `base` is the root-relative folder the file sits in ("" for the root);
    `lead` what a root-relative path is prefixed with to be relative to the
    file's folder, for files above the root (`sub/` for a repository's
    `.gitignore` when the root is its folder `sub`)."""

    def __init__(self, rules: tuple[Rule, ...], base: str = "", lead: str = "") -> None:
        self.rules = rules
        self.base, self.lead = base, lead
        named = [(n, r) for n, r in enumerate(rules) if not r.anchored]
        self._paths = [(n, r) for n, r in enumerate(rules) if r.anchored]
        self._names = {
            is_dir: _joined([(n, r) for n, r in named if is_dir or not r.dir_only])
            for is_dir in (False, True)
        }

    def last_match(self, rel: str, is_dir: bool) -> Rule | None:
        """The last rule that matches root-relative `rel`, if any."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        parts = (self.lead + rel).split("/")
        best = -1
        for test in self._names[is_dir]:
            found = test(parts[-1])
            if found is not None:
                best = max(best, found)
                break
        for n, rule in reversed(self._paths):
            if n <= best:
                break
            if rule.matches(parts, is_dir):
                best = n
                break
        return self.rules[best] if best >= 0 else None


def _joined(rules: list[tuple[int, Rule]]) -> list[Callable[[str], int | None]]:
    """Tests of a name against many basename rules at once, last rules
    first: each gives the index of the last rule of its share that matches."""
    tests: list[Callable[[str], int | None]] = []
    for at in range(len(rules), 0, -CHUNK_RULES):
        share = rules[max(0, at - CHUNK_RULES) : at]
        literals: dict[str, int] = {}
        globs: list[tuple[int, re.Pattern[str]]] = []
        for n, rule in share:
            segment = rule.segments[0]
            if isinstance(segment, str):
                literals[segment] = n
            elif segment is not None:
                globs.append((n, segment))
        tests.append(_test(literals, globs))
    return tests


def _test(
    literals: dict[str, int], globs: list[tuple[int, re.Pattern[str]]]
) -> Callable[[str], int | None]:
    joined = (
        re.compile("|".join(f"(?P<r{n}>{p.pattern})" for n, p in reversed(globs)), re.DOTALL)
        if globs
        else None
    )

    def test(name: str) -> int | None:
        best = literals.get(name, -1)
        if joined is not None:
            found = joined.fullmatch(name)
            if found is not None and found.lastgroup is not None:
                best = max(best, int(found.lastgroup[1:]))
        return best if best >= 0 else None

    return test


# -- reading ignore files --------------------------------------------------------


def display_path(path: str) -> str:
    """`path` as a person reads it: `~` for the home folder."""
    home = os.path.expanduser("~")
    if home != "/" and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def load_rule_file(
    path: str, source: str, base: str = "", lead: str = "", problems: list[str] | None = None
) -> RuleFile | None:
    """The ignore file at `path` (shown as `source`), or None when there is
    none or it holds no rule. A FIFO, a device or a link to one is refused
    without a read (reported once); a file over `MAX_RULE_FILE_BYTES` is
    read that far."""
    try:
        data, _ = read_regular(path, MAX_RULE_FILE_BYTES, cut=True)
    except FileNotFoundError:
        return None
    except SkippedFile as why:
        message = f"nearsym: {source} not read: {why}"
        if report_once((source, 0, "skipped"), message) and problems is not None:
            problems.append(message)
        return None
    except OSError:
        return None
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    rules = parse_rules(lines, source, problems)
    return RuleFile(rules, base, lead) if rules else None


# -- the rules in force in a folder ------------------------------------------------

GIT_FILE = ".gitignore"
PLAIN_FILE = ".ignore"


class Rules:
    """The ignore rules in force in one folder of a walk: git's files
    (the global excludes file, `info/exclude`, `.gitignore`s) and
    `.ignore`s, each outermost first, and the `exclude` setting."""

    def __init__(
        self,
        git: tuple[RuleFile, ...],
        plain: tuple[RuleFile, ...],
        exclude: RuleFile | None,
        in_repo: bool,
        require_git: bool,
    ) -> None:
        self.git, self.plain, self.exclude = git, plain, exclude
        self.in_repo, self.require_git = in_repo, require_git

    def verdict(self, rel: str, is_dir: bool) -> Rule | None:
        """The rule that ignores root-relative `rel`, or None when it is
        kept: the `exclude` setting first, then any `.ignore` (deepest
        first), then git's files (deepest first); a negated rule keeps."""
        for files in ((self.exclude,) if self.exclude else (), self.plain, self.git):
            for rule_file in reversed(files):
                rule = rule_file.last_match(rel, is_dir)
                if rule is not None:
                    return None if rule.negated else rule
        return None

    @property
    def git_applies(self) -> bool:
        return self.in_repo or not self.require_git

    def _with_repo(self, repo: Repository, base: str, lead: str, problems: list[str]) -> Rules:
        """Entering a repository at root-relative `base`: its `info/exclude`
        and, unless an outer repository brought it already, the global
        excludes file."""
        exclude = os.path.join(repo.common_dir, "info", "exclude")
        if not lead and repo.common_dir == os.path.join(repo.top, ".git"):
            label = (f"{base}/" if base else "") + ".git/info/exclude"
        else:
            label = display_path(exclude)
        wanted = [(exclude, label)]
        if not self.in_repo:
            wanted.insert(0, (excludes_file(repo), display_path(excludes_file(repo))))
        git = self.git
        for path, source in wanted:
            found = load_rule_file(path, source, base, lead, problems)
            if found is not None:
                git = (*git, found)
        return Rules(git, self.plain, self.exclude, True, self.require_git)

    def enter(
        self,
        folder: str,
        rel: str,
        names: frozenset[str] | set[str] | None,
        problems: list[str],
        lead: str = "",
    ) -> Rules:
        """The rules inside `folder` (root-relative `rel`, "" for the root),
        whose entries are `names` (None: not listed, look for each file)."""
        rules = self
        if not lead and (names is None or ".git" in names):
            repo = repository_at(folder)
            if repo is not None:
                rules = self._with_repo(repo, rel, lead, problems)
        git, plain = rules.git, rules.plain
        label = display_path(folder) + "/" if lead else f"{rel}/" if rel else ""
        if rules.git_applies and (names is None or GIT_FILE in names):
            found = load_rule_file(
                os.path.join(folder, GIT_FILE), label + GIT_FILE, rel, lead, problems
            )
            if found is not None:
                git = (*git, found)
        if names is None or PLAIN_FILE in names:
            found = load_rule_file(
                os.path.join(folder, PLAIN_FILE), label + PLAIN_FILE, rel, lead, problems
            )
            if found is not None:
                plain = (*plain, found)
        if git is rules.git and plain is rules.plain:
            return rules
        return Rules(git, plain, rules.exclude, rules.in_repo, rules.require_git)


def rules_above(
    root: str, exclude: tuple[str, ...], require_git: bool, problems: list[str]
) -> Rules:
    """The rules in force at `root` before its own ignore files: the
    `exclude` setting, and when `root` is inside a repository, that
    repository's global excludes, `info/exclude` and the ignore files of
    the folders from its top down to `root`'s parent."""
    exclude_rules = parse_rules(exclude, "the exclude setting", problems) if exclude else ()
    rules = Rules((), (), RuleFile(exclude_rules) if exclude_rules else None, False, require_git)
    repo = find_repository(root)
    if repo is None:
        if not require_git:  # applied outside repositories too
            found = load_rule_file(excludes_file(None), display_path(excludes_file(None)))
            if found is not None:
                rules = Rules((found,), (), rules.exclude, False, require_git)
        return rules
    top = repo.top
    if top == root:
        return rules
    rel_root = os.path.relpath(root, top).replace(os.sep, "/")
    rules = rules._with_repo(repo, "", rel_root + "/", problems)
    folder, lead_parts = top, rel_root.split("/")
    for depth in range(len(lead_parts)):
        lead = "/".join(lead_parts[depth:]) + "/"
        rules = rules.enter(folder, "", None, problems, lead=lead)
        folder = os.path.join(folder, lead_parts[depth])
    return rules


@dataclass(slots=True)
class WalkReport:
    """What a walk kept and what ignore rules took out of it."""

    kept: int = 0
    """Source files yielded."""
    dropped: int = 0
    """Source files an ignore rule dropped (files inside a dropped folder
    are never seen, so not counted)."""
    files_by_source: Counter[str] = field(default_factory=Counter)
    folders_by_source: Counter[str] = field(default_factory=Counter)
    by_rule: Counter[Rule] = field(default_factory=Counter)
    """Files and folders dropped, per rule."""
    problems: list[str] = field(default_factory=list)
    """Ignore-file lines skipped, and ignore files not read."""

    def drop(self, rule: Rule, is_dir: bool, source: bool) -> None:
        self.by_rule[rule] += 1
        if is_dir:
            self.folders_by_source[rule.source] += 1
        elif source:
            self.dropped += 1
            self.files_by_source[rule.source] += 1

    def warning(self, root: str) -> str | None:
        """A word for the person when the walk kept nothing, or when ignore
        rules dropped more than `DROPPED_SHARE` of the source files seen."""
        top = self.by_rule.most_common(1)
        rule = f"{top[0][0]}" if top else ""
        folders = sum(self.folders_by_source.values())
        if self.kept == 0:
            if not top:
                return f"nearsym: {display_path(root)} holds no source file to index"
            return (
                f"nearsym: nothing in {display_path(root)} is indexed: ignore rules dropped "
                f"{folders} folders and {self.dropped} source files, most by {rule}"
            )
        if self.dropped > DROPPED_SHARE * (self.kept + self.dropped):
            return (
                f"nearsym: ignore rules dropped {self.dropped} of the {self.kept + self.dropped}"
                f" source files seen in {display_path(root)}, most by {rule}"
            )
        return None


DROPPED_SHARE = 0.9
"""Above this share of the source files a walk saw, dropped by ignore
rules, the person is told (a guess: a repository's `.gitignore` drops
generated files, rarely nine in ten of its sources)."""
