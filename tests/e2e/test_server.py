"""Protocol facts of `nearsym serve`, each against the real server over stdio."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from .conftest import SERVER
from .rawclient import RawClient

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "client-capabilities"

pytestmark = pytest.mark.e2e


async def start(
    root: Path,
    capabilities: types.ClientCapabilities | None = None,
    options: dict[str, Any] | None = None,
) -> LanguageClient:
    client = await ClientServerConfig(server_command=SERVER).start()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            root_uri=root.as_uri(),
            initialization_options=options,
        )
    )
    return client


async def indexed(client: LanguageClient) -> None:
    """Wait for the progress 'end' of the initial index."""
    for _ in range(200):
        for reports in client.progress_reports.values():
            if any(isinstance(r, types.WorkDoneProgressEnd) for r in reports):
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"indexing never ended: {client.progress_reports}")


async def query(client: LanguageClient, text: str) -> list[types.WorkspaceSymbol]:
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=text))
    assert isinstance(result, list)
    return result  # type: ignore[return-value]


def where(symbol: types.WorkspaceSymbol | types.SymbolInformation) -> str:
    location = symbol.location
    assert isinstance(location, types.Location)
    return location.uri.rsplit("/polyglot/", 1)[1]


async def open_file(client: LanguageClient, path: Path, language: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id=language, version=1, text=path.read_text()
            )
        )
    )
    await asyncio.sleep(0.1)


async def test_progress_begins_reports_and_ends(workspace: Path) -> None:
    client = await start(workspace)
    try:
        await indexed(client)
        (reports,) = client.progress_reports.values()
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
        percentages = [r.percentage for r in reports if isinstance(r, types.WorkDoneProgressReport)]
        assert percentages == sorted(percentages)
    finally:
        await client.shutdown_session()


async def test_each_language_answers_with_its_definition_first(workspace: Path) -> None:
    client = await start(workspace)
    try:
        await indexed(client)
        expected = {
            "display_name": ("app/models.py", types.SymbolKind.Method, "User"),
            "ApiClient": ("web/src/client.ts", types.SymbolKind.Class, None),
            "fetchUser": ("web/src/client.ts", types.SymbolKind.Method, "ApiClient"),
            "debounce": ("web/src/util.js", types.SymbolKind.Function, None),
            "ListenAndServe": ("server/main.go", types.SymbolKind.Method, "HTTPServer"),
            "HTTPServer": ("server/main.go", types.SymbolKind.Struct, None),
        }
        for name, (path, kind, container) in expected.items():
            first = (await query(client, name))[0]
            assert (first.name, where(first), first.kind, first.container_name) == (
                name,
                path,
                kind,
                container,
            )
        # the name's range, in UTF-16 columns
        first = (await query(client, "HTTPServer"))[0]
        assert isinstance(first.location, types.Location)
        assert first.location.range == types.Range(
            start=types.Position(line=6, character=5), end=types.Position(line=6, character=15)
        )
    finally:
        await client.shutdown_session()


async def test_open_file_decides_between_same_named_definitions(workspace: Path) -> None:
    client = await start(workspace)
    try:
        await indexed(client)
        await open_file(client, workspace / "alpha" / "registry.py", "python")
        assert where((await query(client, "register"))[0]) == "alpha/registry.py"

        await open_file(client, workspace / "beta" / "registry.py", "python")
        assert where((await query(client, "register"))[0]) == "beta/registry.py"

        client.protocol.notify(
            "nearsym/didFocus",
            {"textDocument": {"uri": (workspace / "alpha" / "registry.py").as_uri()}},
        )
        await asyncio.sleep(0.1)
        assert where((await query(client, "register"))[0]) == "alpha/registry.py"

        client.protocol.notify(
            "window/didChangeActiveDocument",
            {"textDocument": {"uri": (workspace / "beta" / "registry.py").as_uri()}},
        )
        await asyncio.sleep(0.1)
        assert where((await query(client, "register"))[0]) == "beta/registry.py"
    finally:
        await client.shutdown_session()


async def raw_session(root: Path, params: dict[str, Any] | None = None) -> RawClient:
    client = await RawClient.start()
    params = params or {"capabilities": {}}
    params["workspaceFolders"] = [{"uri": root.as_uri(), "name": root.name}]
    params["rootUri"] = root.as_uri()
    params["processId"] = None
    client.initialize_result = await client.request("initialize", params)  # type: ignore[attr-defined]
    client.notify("initialized", {})
    for _ in range(200):
        answer = await client.request("workspace/symbol", {"query": "HTTPServer"})
        if answer["result"]:
            return client
        await asyncio.sleep(0.05)
    raise AssertionError("the fixture never became searchable")


async def test_textdocument_in_the_request_overrides_the_focus(workspace: Path) -> None:
    client = await raw_session(workspace)
    try:
        beta = (workspace / "beta" / "registry.py").as_uri()
        alpha = (workspace / "alpha" / "registry.py").as_uri()
        client.notify("nearsym/didFocus", {"textDocument": {"uri": beta}})
        answer = await client.request(
            "workspace/symbol", {"query": "register", "textDocument": {"uri": alpha}}
        )
        assert answer["result"][0]["location"]["uri"] == alpha
        answer = await client.request("workspace/symbol", {"query": "register"})
        assert answer["result"][0]["location"]["uri"] == beta
    finally:
        assert await client.close() == 0


async def test_max_results_bounds_the_answer(workspace: Path) -> None:
    client = await start(workspace, options={"maxResults": 3})
    try:
        await indexed(client)
        assert len(await query(client, "e")) == 3
    finally:
        await client.shutdown_session()


async def test_bad_option_is_reported_and_defaulted(workspace: Path) -> None:
    client = await start(workspace, options={"maxResults": "many"})
    try:
        await indexed(client)
        assert any("maxResults" in m.message for m in client.messages)
        assert len(await query(client, "e")) > 3
    finally:
        await client.shutdown_session()


async def test_empty_query_returns_the_open_files_symbols_first(workspace: Path) -> None:
    client = await start(workspace)
    try:
        await indexed(client)
        await open_file(client, workspace / "app" / "models.py", "python")
        names = [(s.name, where(s)) for s in await query(client, "")]
        assert names[:5] == [
            ("MAX_USERS", "app/models.py"),
            ("User", "app/models.py"),
            ("role", "app/models.py"),
            ("__init__", "app/models.py"),
            ("display_name", "app/models.py"),
        ]
        assert len(names) > 6  # then the rest of the workspace, nearest first
    finally:
        await client.shutdown_session()


async def test_unsaved_buffer_symbols_are_found(workspace: Path) -> None:
    client = await start(workspace)
    try:
        await indexed(client)
        path = workspace / "app" / "models.py"
        await open_file(client, path, "python")
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=0, character=0),
                            end=types.Position(line=0, character=0),
                        ),
                        text="def freshly_typed():\n    pass\n",
                    )
                ],
            )
        )
        await asyncio.sleep(0.1)
        first = (await query(client, "freshly_typed"))[0]
        assert (first.name, where(first)) == ("freshly_typed", "app/models.py")
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri())
            )
        )
        await asyncio.sleep(0.1)
        assert [s.name for s in await query(client, "freshly_typed")] == []
    finally:
        await client.shutdown_session()


@pytest.mark.parametrize(
    "recorded",
    [
        "vscode-1.100.3-languageclient-11.0.0.json",
        "neovim-0.11.4.json",
        "neovim-0.7.2.json",
        "emacs-28.2-eglot-1.9.json",
    ],
)
async def test_recorded_clients_get_utf16_and_kinds_they_know(
    workspace: Path, recorded: str
) -> None:
    """The initialize params real editors sent: UTF-16 is negotiated (what
    extraction computes) and every kind is one the client declared."""
    params = json.loads((RECORDED / recorded).read_text())
    client = await raw_session(workspace, params)
    try:
        capabilities = client.initialize_result["result"]["capabilities"]  # type: ignore[attr-defined]
        assert capabilities["workspaceSymbolProvider"]
        assert capabilities.get("positionEncoding", "utf-16") == "utf-16"
        answer = await client.request("workspace/symbol", {"query": "e"})
        kinds = {s["kind"] for s in answer["result"]}
        declared = (
            params["capabilities"].get("workspace", {}).get("symbol", {}).get("symbolKind", {})
        ).get("valueSet") or list(range(1, 19))
        assert kinds <= set(declared)
        assert 23 not in kinds or 23 in declared  # Go struct falls back to class
    finally:
        assert await client.close() == 0


async def test_shutdown_and_exit_are_clean(workspace: Path) -> None:
    client = await start(workspace)
    await indexed(client)
    await client.shutdown_session()
    server = client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 5) == 0
