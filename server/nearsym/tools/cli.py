"""The `nearsym` command: `serve` (the language server) and `search`.

Logging goes to stderr, never stdout: in stdio mode stdout carries the
protocol.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence

from nearsym import __version__
from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.rank import POLICIES, RankContext, RankPolicy, explain
from nearsym.core.sortkey import ExplainedKey, format_keys, key_items
from nearsym.index.cache import Cache
from nearsym.index.namespace import Namespace
from nearsym.index.search import mention_lookup, search
from nearsym.index.store import SymbolIndex
from nearsym.tools import publish
from nearsym.workspace.children import isolate
from nearsym.workspace.config import DEFAULT_MAX_FILE_BYTES, Config, index_key
from nearsym.workspace.discovery import WalkReport
from nearsym.workspace.imports import Relations
from nearsym.workspace.indexer import index_into, save_snapshot
from nearsym.workspace.members import WorkspaceContext
from nearsym.workspace.pool import Workers

log = logging.getLogger("nearsym")


def _positive(text: str) -> int:
    """A whole number above 0, for argparse (which reports the error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nearsym",
        description="Go to Symbol in Workspace: a language server and a command line.",
    )
    parser.add_argument("--version", action="version", version=f"nearsym {__version__}")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the language server")
    serve.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (default)")
    serve.add_argument(
        "--tcp",
        metavar="[HOST:]PORT",
        help="listen on a TCP port, for debugging (loopback unless HOST says otherwise)",
    )

    find = sub.add_parser("search", help="search a workspace from the command line")
    find.add_argument("query")
    find.add_argument(
        "--root", action="append", metavar="DIR", help="workspace folder (repeatable; default .)"
    )
    find.add_argument("--from", dest="open_file", metavar="FILE", help="rank as if FILE were open")
    find.add_argument("--limit", type=int, default=20)
    find.add_argument("--offset", type=int, default=0)
    find.add_argument("--json", action="store_true", help="print a JSON array")
    find.add_argument(
        "--explain",
        action="store_true",
        help="print each result's score components and every sort key (kept by --json)",
    )
    find.add_argument("--max-file-bytes", type=_positive, default=DEFAULT_MAX_FILE_BYTES)
    find.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    find.add_argument("--follow-symlinks", action="store_true")
    find.add_argument(
        "--no-require-git",
        action="store_true",
        help="apply .gitignore files outside git repositories too",
    )
    find.add_argument(
        "--no-cache", action="store_true", help="parse everything; neither read nor write the cache"
    )
    idx = sub.add_parser("index", help="index folders and report what was found")
    idx.add_argument(
        "--root", action="append", metavar="DIR", help="folder (repeatable; default .)"
    )
    idx.add_argument(
        "--stats", action="store_true", help="per language: files, definitions, kinds, time"
    )
    idx.add_argument("--json", action="store_true", help="print the figures as JSON")
    idx.add_argument(
        "--no-require-git",
        action="store_true",
        help="apply .gitignore files outside git repositories too",
    )

    be = sub.add_parser("bench", help="measure indexing, memory and query latency on a tree")
    be.add_argument("--root", action="append", metavar="DIR", help="folder (repeatable; default .)")
    be.add_argument("--queries", metavar="FILE", help="one query a line (default: a seeded mix)")
    be.add_argument("--count", type=int, default=210, help="queries in the drawn mix")
    be.add_argument("--vs-ctags", action="store_true", help="also time ctags -R on the same tree")
    be.add_argument("--no-lsp", action="store_true", help="skip the LSP stdio measurement")
    be.add_argument("--runs", type=int, default=3, help="runs per figure; medians are printed")
    be.add_argument("--workers", type=int, help="indexing processes (default: one per core)")
    be.add_argument(
        "--client",
        metavar="FILE",
        help="an editor's recorded initialize params (JSON: capabilities, clientInfo) for the"
        " LSP figures; default: a client that declares only work-done progress",
    )

    publish.add_parser(sub)

    ev = sub.add_parser("eval", help="measure ranking on a golden set of cases")
    ev.add_argument("cases", metavar="CASES.jsonl")
    ev.add_argument("--corpora", required=True, metavar="DIR", help="folder holding dev/<corpus>/")
    ev.add_argument(
        "--policy",
        action="append",
        choices=sorted(POLICIES),
        help="rank policy (repeatable; default: all)",
    )
    ev.add_argument("--json", action="store_true", help="print the figures as JSON")
    ev.add_argument(
        "--failures", metavar="FILE", help="write every case not ranked first, with explain()"
    )
    ev.add_argument(
        "--swap-open",
        action="store_true",
        help="replace each open file by a neighbour that does not mention the name",
    )
    ev.add_argument(
        "--no-keystrokes", action="store_true", help="skip keystrokes to first place (faster)"
    )
    ev.add_argument(
        "--stability",
        action="store_true",
        help="also measure the share of cases whose first answer is the same at"
        " maxResults 1, 20 and 100",
    )
    return parser


def run_index(args: argparse.Namespace) -> int:
    totals: dict[str, dict[str, object]] = {}
    ignored: dict[str, tuple[int, int]] = {}
    started = time.perf_counter()
    roots = [os.path.abspath(r) for r in (args.root or ["."])]
    for root in roots:
        if not os.path.isdir(root):
            print(f"nearsym: {root}: not a folder", file=sys.stderr)
            return 2
    workers = Workers()
    signal.signal(signal.SIGINT, interrupted(workers))
    try:
        for root in roots:
            _index_root(root, args, workers, totals, ignored)
    finally:
        workers.close(wait=True)  # the tracker stopped before the interpreter ends
    elapsed = time.perf_counter() - started
    if args.json:
        dropped = {k: {"files": f, "folders": d} for k, (f, d) in ignored.items()}
        figures = {"languages": totals, "ignored": dropped, "seconds": round(elapsed, 3)}
        json.dump(figures, sys.stdout, indent=1)
        print()
        return 0
    files = sum(int(r["files"]) for r in totals.values())  # type: ignore[call-overload]
    defs = sum(int(r["definitions"]) for r in totals.values())  # type: ignore[call-overload]
    print(f"{files} files, {defs} definitions in {elapsed:.2f}s")
    if args.stats:
        print(f"{'language':12} {'files':>7} {'skipped':>7} {'defs':>9} {'seconds':>8}  kinds")
        for name, row in sorted(totals.items(), key=lambda kv: -int(kv[1]["definitions"])):  # type: ignore[call-overload]
            kinds = row["kinds"]
            assert isinstance(kinds, dict)
            top = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
            print(
                f"{name:12} {row['files']:>7} {row['skipped']:>7} {row['definitions']:>9} "
                f"{float(row['seconds']):>8.2f}  {top}"  # type: ignore[arg-type]
            )
        if ignored:
            print(f"\n{'ignore file':40} {'files':>7} {'folders':>7}  (dropped by its rules)")
            for label, (dropped_files, folders) in sorted(ignored.items()):
                print(f"{label:40} {dropped_files:>7} {folders:>7}")
    return 0


def _index_root(
    root: str,
    args: argparse.Namespace,
    workers: Workers,
    totals: dict[str, dict[str, object]],
    ignored: dict[str, tuple[int, int]],
) -> None:
    """Index `root` on `workers` and add its figures to `totals` and
    `ignored` (per ignore file: the files and folders its rules dropped)."""
    config = Config(require_git=not args.no_require_git)
    bar = ProgressBar(root)
    stats = index_into(SymbolIndex(root), config, workers=workers, progress=bar)
    bar.clear()
    _tell_walk(root, stats.walk)
    walk = stats.walk
    for source in {*walk.files_by_source, *walk.folders_by_source}:
        label = source if len(args.root or ()) < 2 else os.path.join(root, source)
        ignored[label] = (walk.files_by_source[source], walk.folders_by_source[source])
    for name, lang in stats.languages.items():
        row = totals.setdefault(
            name, {"files": 0, "skipped": 0, "definitions": 0, "seconds": 0.0, "kinds": {}}
        )
        row["files"] = int(row["files"]) + lang.files  # type: ignore[call-overload]
        row["skipped"] = int(row["skipped"]) + lang.skipped  # type: ignore[call-overload]
        row["definitions"] = int(row["definitions"]) + lang.definitions  # type: ignore[call-overload]
        row["seconds"] = float(row["seconds"]) + lang.seconds  # type: ignore[arg-type]
        kinds = row["kinds"]
        assert isinstance(kinds, dict)
        for kind, count in lang.kinds.items():
            kinds[kind] = kinds.get(kind, 0) + count


def _tell_walk(root: str, walk: WalkReport) -> None:
    """Bad ignore lines, and a folder ignore rules left (nearly) empty, on stderr."""
    for message in [*walk.problems, walk.warning(root)]:
        if message is not None:
            print(message, file=sys.stderr)


def run_eval(args: argparse.Namespace) -> int:
    from nearsym.tools.evaluate import (
        Corpora,
        evaluate,
        failures,
        format_summary,
        load_cases,
        swap_open_files,
    )

    with open(args.cases, encoding="utf-8") as f:
        cases = load_cases(f)
    corpora = Corpora(args.corpora)
    if args.swap_open:
        cases = swap_open_files(cases, corpora)
    figures: dict[str, object] = {}
    lines = []
    for name in args.policy or sorted(POLICIES, key=lambda n: n != "seed"):
        policy = POLICIES[name]
        started = time.perf_counter()
        report = evaluate(
            cases, corpora, policy, keystrokes=not args.no_keystrokes, stability=args.stability
        )
        summary = report.summary()
        summary["seconds"] = round(time.perf_counter() - started, 1)
        figures[name] = summary
        lines.append(format_summary(summary, name))
        if args.failures:
            base, ext = os.path.splitext(args.failures)
            target = (
                args.failures if len(args.policy or ()) == 1 else f"{base}.{name}{ext or '.md'}"
            )
            with open(target, "w", encoding="utf-8") as out:
                out.write(failures(report, corpora, policy))
    if args.json:
        json.dump(figures, sys.stdout, indent=1)
        print()
    else:
        header, rule = lines[0].splitlines()[:2]
        print(header)
        print(rule)
        for table in lines:
            print(table.splitlines()[2])
        print(f"{len(cases)} cases from {args.cases}")
    return 0


def _display_path(file: str) -> str:
    rel = os.path.relpath(file)
    return file if rel.startswith("..") else rel


def _row(symbol: Symbol) -> str:
    file = _display_path(symbol.file)
    return (
        f"{file}:{symbol.span.line + 1}:{symbol.span.col + 1}  "
        f"{symbol.kind.label}  {symbol.qualified_name}"
    )


def _as_json(symbol: Symbol) -> dict[str, object]:
    return {
        "name": symbol.name,
        "kind": symbol.kind.label,
        "container": symbol.container,
        "path": symbol.file,
        "line": symbol.span.line + 1,
        "column": symbol.span.col + 1,
        "language": symbol.language,
    }


class ProgressBar:
    """`indexing ROOT  1234/5678 files  22%` on stderr, redrawn in place,
    when stderr is a terminal; nothing otherwise (a pipe, a log file)."""

    INTERVAL = 0.1
    """Seconds between redraws."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.shown = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.shown or now - self._last < self.INTERVAL:
            return
        self._last = now
        percent = 100 * done // max(1, total)
        line = f"nearsym: indexing {_display_path(self.root)}  {done}/{total} files  {percent}%"
        sys.stderr.write("\r" + line[-200:] + "\x1b[K")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown and self._last:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def search_errors(args: argparse.Namespace, roots: list[str]) -> str | None:
    """What is wrong with `nearsym search`'s arguments, if anything."""
    if args.limit < 1:
        return f"--limit {args.limit}: must be at least 1"
    if args.offset < 0:
        return f"--offset {args.offset}: must be 0 or more"
    for root in roots:
        if not os.path.isdir(root):
            return f"{root}: not a folder"
        try:
            with os.scandir(root) as entries:
                next(entries, None)
        except OSError as error:
            return f"{root}: cannot be read ({error.strerror})"
    if args.open_file is not None and not os.path.isfile(args.open_file):
        return f"--from {args.open_file}: no such file"
    return None


def interrupted(workers: Workers) -> Callable[[int, object], None]:
    """A SIGINT handler that ends the command at once: the pool's workers
    are killed (their parses are not needed) and the process exits 130,
    without the interpreter's teardown waiting on the pool's threads."""

    def handler(signum: int, frame: object) -> None:
        workers.kill()
        sys.stderr.write("\nnearsym: interrupted\n")
        sys.stderr.flush()
        os._exit(130)

    return handler


def run_search(args: argparse.Namespace) -> int:
    config = Config(
        max_file_bytes=args.max_file_bytes,
        exclude=tuple(args.exclude),
        follow_symlinks=args.follow_symlinks,
        require_git=not args.no_require_git,
    )
    roots = [os.path.abspath(r) for r in (args.root or ["."])]
    problem = search_errors(args, roots)
    if problem is not None:
        print(f"nearsym: {problem}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    namespaces = []
    workers = Workers()
    signal.signal(signal.SIGINT, interrupted(workers))
    try:
        for root in roots:
            index = SymbolIndex(root)
            cache = None if args.no_cache else Cache(root, settings=index_key(config))
            bar = ProgressBar(root)
            stats = index_into(index, config, workers=workers, cache=cache, progress=bar)
            bar.clear()
            _tell_walk(root, stats.walk)
            if cache is not None:
                save_snapshot(index, stats, cache)
                cache.close()
            if stats.files == 0:
                print(f"nearsym: {root}: no source files to index", file=sys.stderr)
                return 2
            namespaces.append(Namespace(root, index))
    finally:
        workers.close(wait=True)  # the tracker stopped before the interpreter ends
    log.info("indexed %d roots in %.2fs", len(roots), time.perf_counter() - started)
    open_file = os.path.abspath(args.open_file) if args.open_file else None
    relations = Relations()
    related = relations.related_files(open_file, namespaces)
    policy = RankPolicy()
    hints = WorkspaceContext(relations).hints(open_file, namespaces, policy)
    keys: dict[int, ExplainedKey] | None = {} if args.explain else None
    results = search(
        namespaces,
        args.query,
        args.limit,
        args.offset,
        open_file,
        None,
        related,
        hints=hints,
        keys=keys,
    )
    context = RankContext(open_file, policy, related, mention_lookup(namespaces, policy), hints)
    parsed = Query.parse(args.query)
    if args.json:
        rows = [_as_json(s) for s in results]
        if keys is not None:
            for row, symbol in zip(rows, results, strict=True):
                row["explain"] = explain(parsed, symbol, context)
                row["keys"] = key_items(keys[id(symbol)]) if id(symbol) in keys else []
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    for symbol in results:
        print(_row(symbol))
        if keys is not None:
            print(explain(parsed, symbol, context))
            if id(symbol) in keys:
                print(format_keys(keys[id(symbol)]))
    if not results:
        print(f"nearsym: no definition matches {args.query!r}", file=sys.stderr)
    return 0


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def tcp_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `:PORT` or `PORT` (loopback); `[::1]:PORT` for IPv6.
    Raises ValueError with the message to print."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host = ""
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--tcp {text}: the port must be a number from 1 to 65535")
    return host, int(port)


def run_serve(args: argparse.Namespace) -> int:
    from nearsym.index.allocator import configure, resume_collector
    from nearsym.index.cache import cache_dir
    from nearsym.lsp.early import Relay
    from nearsym.lsp.opening import open_early, read_stdin, write_stdout

    configure()
    relay = Relay()
    opened = None
    if not args.tcp:  # a TCP server's clients come and go: each starts its own
        from nearsym.workspace.watcher import prestart

        prestart()  # its start-up overlaps ours (see `watcher`)
        read_stdin(relay)
        # A restart's first answers, before pygls and lsprotocol are imported.
        opened = open_early(relay, write_stdout, cache_dir())
    from nearsym.lsp.prebuilt import lsprotocol_types

    lsprotocol_types(cache_dir())  # before pygls imports it: attrs' code compiled once
    from nearsym.lsp.handlers import make_server  # pygls only when serving
    from nearsym.lsp.prebuilt import cattrs_code
    from nearsym.lsp.transport import serve_stdio, serve_tcp

    if args.tcp:
        try:
            host, port = tcp_address(args.tcp)
        except ValueError as error:
            print(f"nearsym: {error}", file=sys.stderr)
            return 2
        if host not in LOOPBACK:
            print(
                f"nearsym: warning: listening on {host}, not loopback: any machine that can "
                "reach it may add folders and read every symbol in them",
                file=sys.stderr,
            )
    save_code = cattrs_code(cache_dir())  # before the converter generates any
    server = make_server(opened)
    server.on_exit.append(save_code)
    resume_collector()  # paused for the start-up's imports (`nearsym.__main__`)
    if args.tcp:
        try:
            serve_tcp(server.protocol, server, host, port)
        except OSError as error:
            print(f"nearsym: cannot listen on {host}:{port}: {error.strerror}", file=sys.stderr)
            return 2
    else:
        serve_stdio(server.protocol, server, relay, opened)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    isolate()
    try:
        return _run(argv)
    except BrokenPipeError:
        # The reader left early (`nearsym search x | head`): not an error to
        # report. Python would still fail flushing stdout at exit, so it
        # points at /dev/null now.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        return 0


def _run(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "serve":
        return run_serve(args)
    from nearsym.index.allocator import resume_collector

    resume_collector()  # paused for the start-up's imports (`nearsym.__main__`)
    if args.command == "eval":
        return run_eval(args)
    if args.command == "index":
        return run_index(args)
    if args.command == "publish":
        return publish.run(args)
    if args.command == "bench":
        from nearsym.tools.bench import run

        roots = args.root or ["."]
        if len(roots) > 1:
            print("nearsym bench: one --root at a time", file=sys.stderr)
            return 2
        lsp = not args.no_lsp
        print(
            run(
                roots,
                args.queries,
                args.count,
                args.vs_ctags,
                lsp,
                max(1, args.runs),
                args.workers,
                args.client,
            )
        )
        return 0
    return run_search(args)


if __name__ == "__main__":
    raise SystemExit(main())
