"""Settings with their defaults, built from initializationOptions or the CLI.

A bad value never stops the server: it is replaced by the default and
reported, so the editor can show the person what was wrong.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields, replace
from typing import Any

DEFAULT_MAX_RESULTS = 100
DEFAULT_MAX_FILE_BYTES = 1_000_000
"""Larger files are skipped: generated or minified sources, data in code
files. 1 MB holds all but a handful of hand-written sources."""


@dataclass(frozen=True, slots=True)
class Config:
    max_results: int = DEFAULT_MAX_RESULTS
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    exclude: tuple[str, ...] = field(default_factory=tuple)
    follow_symlinks: bool = False
    languages: tuple[str, ...] = field(default_factory=tuple)
    """Only these languages (registry names); empty means all."""
    cache: bool = True
    """Keep parsed definitions on disk (`cache`) so a restart loads them."""
    shared_index: str | None = None
    """A team's shared index: a PostgreSQL URL (`lsp.shared`), or None."""
    shared_index_budget_ms: int = 150
    """How long an answer waits for the shared index (`lsp.shared`)."""
    require_git: bool = True
    """Apply `.gitignore`, `.git/info/exclude` and git's global excludes
    only inside a git repository (`requireGit`), as git and ripgrep do."""
    dependencies: str | tuple[str, ...] = "off"
    """The project's dependencies as namespaces ranked after the
    workspace's own definitions (`workspace.dependencies`): `"off"` (only
    a query ending in `**` reads them), `"on"` (the workspace's virtualenv
    and `node_modules`), or a tuple of folders, exactly those. Not part of
    `index_key`: it adds namespaces, it does not change the workspace's."""


def index_key(config: Config) -> str:
    """Every setting that changes which files are indexed or what is read
    of them, as one string: part of the cache's key, and what decides
    whether new settings need a re-index."""
    return repr(
        (
            config.max_file_bytes,
            sorted(config.languages),
            config.exclude,
            config.follow_symlinks,
            config.require_git,
        )
    )


_KEYS = {
    "maxResults": "max_results",
    "maxFileBytes": "max_file_bytes",
    "exclude": "exclude",
    "followSymlinks": "follow_symlinks",
    "languages": "languages",
    "cache": "cache",
    "sharedIndex": "shared_index",
    "sharedIndexBudgetMs": "shared_index_budget_ms",
    "requireGit": "require_git",
    "dependencies": "dependencies",
}


EDITOR_KEYS = frozenset({"command", "trace"})
"""Keys of the `nearsym` settings section that the editors' own clients
read (VS Code's `nearsym.command`, `nearsym.trace.server`): not ours, not
reported."""


def _check(name: str, value: Any) -> Any:
    if name == "shared_index":
        if value is None or value == "":
            return None
        if not isinstance(value, str) or not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        return value
    if name in ("max_results", "max_file_bytes", "shared_index_budget_ms"):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError("must be a positive whole number")
        return value
    if name == "exclude":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of glob strings")
        return tuple(value)
    if name == "languages":
        from nearsym.extract.languages import language_named

        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of language names")
        unknown = [v for v in value if language_named(v) is None]
        if unknown:
            raise ValueError(f"names unknown languages: {', '.join(unknown)}")
        return tuple(value)
    if name == "dependencies":
        if value is True or value is False:
            return "on" if value else "off"
        if value in ("off", "on"):
            return value
        if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            return tuple(value)
        raise ValueError('must be "off", "on" or a list of folders')
    if name in ("follow_symlinks", "cache", "require_git"):
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value
    raise KeyError(name)


def config_from_options(options: Any, base: Config | None = None) -> tuple[Config, list[str]]:
    """Read `initializationOptions` (camelCase keys). Returns the config and a
    message per value that was ignored."""
    config = base or Config()
    problems: list[str] = []
    if options is None or options == []:
        return config, problems  # Lua clients send an empty table as []
    if not isinstance(options, dict):
        return config, ["nearsym: initializationOptions must be an object; using defaults"]
    known = {f.name for f in fields(Config)}
    for key, value in options.items():
        name = _KEYS.get(key)
        if name is None or name not in known:
            if key not in EDITOR_KEYS:
                near = difflib.get_close_matches(str(key), list(_KEYS), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(f"nearsym: unknown setting {key!r}{hint}; ignored")
            continue
        try:
            config = replace(config, **{name: _check(name, value)})
        except ValueError as error:
            problems.append(f"nearsym: setting {key!r} {error}; using the default")
    return config, problems
