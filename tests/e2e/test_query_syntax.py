"""Queries that name where, and the query modifiers, against the real server
over stdio: one workspace laid out like the projects the examples come from
(flask, httpx, click, sphinx), each example's first answer checked."""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient

from .test_server import indexed, query, start

pytestmark = pytest.mark.e2e

FILES = {
    "src/flask/__init__.py": "from .app import Flask\n",
    "src/flask/app.py": """
        from .sansio.app import App

        class Flask(App):
            def raise_routing_exception(self, request):
                pass

            def make_response(self, rv):
                pass
        """,
    "src/flask/sansio/app.py": """
        from .scaffold import Scaffold

        class App(Scaffold):
            def register_blueprint(self, blueprint):
                pass
        """,
    "src/flask/sansio/scaffold.py": """
        class Scaffold:
            def route(self, rule):
                pass

            def _method_route(self, method, rule):
                pass
        """,
    "src/flask/testing.py": """
        class FlaskClient:
            pass

        def flask_app_factory():
            pass
        """,
    "tests/test_config.py": """
        def test_custom_config_class():
            class Flask:
                pass
        """,
    "httpx/_client.py": """
        class BaseClient:
            pass

        class Client(BaseClient):
            pass

        class AsyncClient(BaseClient):
            pass

        class ClientState:
            pass
        """,
    "httpx/_models.py": """
        class Request:
            pass

        def request(method, url):
            pass
        """,
    "tests/test_async_client.py": """
        class AsyncClientStub:
            pass
        """,
    "src/click/core.py": """
        class Command:
            pass

        class Group(Command):
            def command(self, name):
                pass
        """,
    "src/click/decorators.py": """
        def command(name=None):
            pass
        """,
    "sphinx/application.py": """
        class Sphinx:
            def require_sphinx(self, version):
                pass
        """,
    "sphinx/util/docutils.py": """
        class SphinxRole:
            pass
        """,
    "sphinx/domains/__init__.py": """
        class Domain:
            pass
        """,
    "sphinx/domains/python/__init__.py": """
        from sphinx.domains import Domain

        class PythonDomain(Domain):
            pass
        """,
    "tests/test_domain_py.py": """
        class PythonDomainStub:
            pass
        """,
}


@pytest_asyncio.fixture
async def client(tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = tmp_path / "projects"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    started = await start(root)
    try:
        await indexed(started)
        yield started
    finally:
        await started.shutdown_session()


def described(symbol: types.WorkspaceSymbol | types.SymbolInformation) -> str:
    """`path:line container.name` of an answer (`line` 1-based)."""
    location = symbol.location
    assert isinstance(location, types.Location)
    path = location.uri.rsplit("/projects/", 1)[1]
    owner = f"{symbol.container_name}." if symbol.container_name else ""
    return f"{path}:{location.range.start.line + 1} {owner}{symbol.name}"


async def first(client: LanguageClient, text: str) -> str:
    answers = await query(client, text)
    assert answers, f"{text!r} answered nothing"
    return described(answers[0])


async def test_queries_that_name_where_answer_the_intended_definition(
    client: LanguageClient,
) -> None:
    expected = {
        "flask.Flask": "src/flask/app.py:3 Flask",
        "httpx.AsyncClient": "httpx/_client.py:7 AsyncClient",
        "click.core.Command": "src/click/core.py:1 Command",
        "sphinx.application.Sphinx": "sphinx/application.py:1 Sphinx",
        "python PythonDomain": "sphinx/domains/python/__init__.py:3 PythonDomain",
        # No `Flask` in sansio/app.py: the one that `app` locates is next.
        "sansio/app Flask": "src/flask/app.py:3 Flask",
        "flask/sansio App": "src/flask/sansio/app.py:3 App",
        "sphinx::domains::Domain": "sphinx/domains/__init__.py:1 Domain",
        # Owner.member as before
        "App.register_blueprint": "src/flask/sansio/app.py:4 App.register_blueprint",
        "App#register_blueprint": "src/flask/sansio/app.py:4 App.register_blueprint",
        "Group.command": "src/click/core.py:5 Group.command",
        "Flask.make_response": "src/flask/app.py:7 Flask.make_response",
    }
    got = {text: await first(client, text) for text in expected}
    assert got == expected


async def test_an_owner_reaches_the_members_of_its_base_classes(client: LanguageClient) -> None:
    expected = {
        # Defined on a base class, two steps up: before Flask's own
        # `raise_routing_exception`, which holds `route` only scattered.
        "Flask.route": "src/flask/sansio/scaffold.py:2 Scaffold.route",
        "App.route": "src/flask/sansio/scaffold.py:2 Scaffold.route",
        "Flask::register_blueprint": "src/flask/sansio/app.py:4 App.register_blueprint",
    }
    got = {text: await first(client, text) for text in expected}
    assert got == expected
    # A member the class defines itself stays first.
    assert await first(client, "Flask.make_response") == "src/flask/app.py:7 Flask.make_response"


async def test_modifiers_filter_by_name_and_kind(client: LanguageClient) -> None:
    exact = [described(s) for s in await query(client, "'flask")]
    assert exact[0] == "src/flask/app.py:3 Flask"
    assert all(d.endswith("Flask") for d in exact), exact
    assert len(exact) == 2  # and the test's local class

    prefix = {s.name for s in await query(client, "^Fla")}
    assert prefix == {"Flask", "FlaskClient"}  # not `flask_app_factory`: a capital

    suffix = {s.name for s in await query(client, "client$")}
    assert suffix == {"BaseClient", "Client", "AsyncClient", "FlaskClient"}

    types_only = [described(s) for s in await query(client, "#request")]
    assert types_only == ["httpx/_models.py:1 Request"]

    both = [described(s) for s in await query(client, "#^Async")]
    assert both[0] == "httpx/_client.py:7 AsyncClient"
    assert all(" Async" in d for d in both), both


async def test_a_lone_modifier_answers_as_the_empty_query(client: LanguageClient) -> None:
    empty = [described(s) for s in await query(client, "")]
    assert empty
    for text in ("^", "'", "$", "#", "*", " ^ "):
        assert [described(s) for s in await query(client, text)] == empty, text
    # A modifier on its own never empties what the rest gives.
    assert await first(client, "^  Sphinx") == "sphinx/application.py:1 Sphinx"
