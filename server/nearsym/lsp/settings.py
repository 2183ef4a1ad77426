"""Settings from the client: `initializationOptions`, then
`workspace/didChangeConfiguration` (pulled with `workspace/configuration`
when the client supports it).

A bad value is reported to the person (`window/showMessage`) and replaced by
its default; a change of what belongs to the index (exclusions, size limit,
links, languages) drops what no longer belongs and re-indexes.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from nearsym.core.rank import FETCH_MAX
from nearsym.lsp.convert import uri_to_path
from nearsym.lsp.indexing import Indexing
from nearsym.workspace.config import Config, config_from_options, index_key

log = logging.getLogger(__name__)


def report(server: LanguageServer, problems: list[str]) -> None:
    for problem in problems:
        server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=problem)
        )


def initial_config(server: LanguageServer, options: Any) -> Config:
    """The settings `initialize` carries; bad values reported, defaulted."""
    config, problems = config_from_options(options)
    report(server, problems)
    report_limits(server, config, None)
    return config


def report_limits(server: LanguageServer, config: Config, old: Config | None) -> None:
    """Say once (`window/logMessage`) when `maxResults` asks for more than an
    answer can hold: the candidate pool is at most `FETCH_MAX` rows."""
    wanted = config.max_results
    if wanted > FETCH_MAX and (old is None or old.max_results != wanted):
        message = (
            f"nearsym: maxResults {wanted} is above the largest candidate pool"
            f" ({FETCH_MAX}); an answer holds at most {FETCH_MAX} symbols"
        )
        log.info(message)
        server.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=message)
        )


async def pull(server: LanguageServer, pushed: Any) -> Any:
    """The `nearsym` section, pulled when the client supports it; else the
    pushed settings."""
    workspace = server.client_capabilities.workspace
    if workspace is None or not workspace.configuration:
        return pushed
    try:
        pulled = await server.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="nearsym")])
        )
    except Exception:
        log.warning("workspace/configuration failed; using the pushed settings")
        return pushed
    return pulled[0] if pulled else pushed


async def apply_settings(
    server: LanguageServer,
    indexing: Indexing,
    settings: Any,
    on_config: Callable[[Config], None] | None = None,
) -> None:
    """New settings: report bad values, re-index when membership changed.
    `on_config` sees the new settings before any re-index starts."""
    if isinstance(settings, dict) and isinstance(settings.get("nearsym"), dict):
        settings = settings["nearsym"]
    live = indexing.live
    config, problems = config_from_options(settings, Config())
    report(server, problems)
    old = live.config
    report_limits(server, config, old)
    live.config = config
    if on_config is not None:
        on_config(config)
    if index_key(old) != index_key(config):
        loop = asyncio.get_running_loop()
        for ns in list(live.namespaces):
            keep = {sf.rel for sf in await loop.run_in_executor(None, live.discover, ns)}
            with live.lock:
                for rel in ns.index.files:
                    if rel not in keep:
                        ns.index.remove_file(rel)
        await indexing.index_namespaces(list(live.namespaces), "nearsym: re-indexing")


def roots(params: types.InitializeParams) -> list[str]:
    """The workspace folders `initialize` names (else its root URI or path)."""
    found: list[str] = []
    for folder in params.workspace_folders or []:
        path = uri_to_path(folder.uri)
        if path is not None:
            found.append(path)
    if not found:
        if params.root_uri and (path := uri_to_path(params.root_uri)):
            found.append(path)
        elif params.root_path:
            found.append(os.path.abspath(params.root_path))
    return list(dict.fromkeys(found))
