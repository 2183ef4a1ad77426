"""lsprotocol's classes built from stored attrs code (`nearsym.lsp.prebuilt`).

Each check runs a fresh interpreter: in this one lsprotocol is imported
already, and a second import would build nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERVER = str(Path(__file__).resolve().parents[2] / "server")

# Counts attrs' compiles for lsprotocol (their file names start with "<attrs generated"),
# imports lsprotocol.types (through prebuilt, or plainly with "plain"), and
# prints the count and a fingerprint of every generated method's code.
PROBE = r"""
import attr  # its own classes are compiled on its import, before prebuilt can help
import builtins, hashlib, json, sys
compiles = [0]
real = builtins.compile
def counting(source, filename, *args, **kwargs):
    if str(filename).startswith("<attrs generated"):
        compiles[0] += 1
    return real(source, filename, *args, **kwargs)
if sys.argv[1] == "plain":  # as attrs compiles: a wrapper would change the inherited flags
    import lsprotocol.types as types
else:
    builtins.compile = counting
    from nearsym.lsp.prebuilt import lsprotocol_types
    types = lsprotocol_types(sys.argv[1])
def code_print(code):
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode(),
             repr([c for c in code.co_consts if not hasattr(c, "co_code")]).encode(),
             code.co_filename.encode(), str(code.co_flags).encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()
prints = {}
for name, cls in sorted(vars(types).items()):
    if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__"):
        for method in ("__init__", "__eq__", "__repr__", "__setattr__"):
            function = cls.__dict__.get(method)
            if hasattr(function, "__code__"):
                prints[f"{name}.{method}"] = code_print(function.__code__)
print(json.dumps({"compiles": compiles[0], "prints": prints}))
"""


def run_probe(code: str, *arguments: str) -> dict[str, object]:
    """`code` in a fresh interpreter with nearsym's source on its path: the
    JSON it prints."""
    env = {**os.environ, "PYTHONPATH": SERVER}
    done = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def probe(argument: str) -> dict[str, object]:
    return run_probe(PROBE, argument)


def test_the_second_start_compiles_no_attrs_code(tmp_path: Path) -> None:
    first = probe(str(tmp_path))
    assert isinstance(first["compiles"], int) and first["compiles"] > 100
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".marshal")]
    second = probe(str(tmp_path))
    assert second["compiles"] == 0


def test_stored_code_is_the_code_attrs_compiles(tmp_path: Path) -> None:
    plain = probe("plain")
    probe(str(tmp_path))  # stores
    stored = probe(str(tmp_path))  # uses what was stored
    assert stored["compiles"] == 0
    assert isinstance(plain["prints"], dict) and len(plain["prints"]) > 500
    assert stored["prints"] == plain["prints"]


def test_a_damaged_file_is_compiled_again_and_rewritten(tmp_path: Path) -> None:
    probe(str(tmp_path))
    (stored,) = [p for p in tmp_path.iterdir() if p.name.endswith(".marshal")]
    stored.write_bytes(b"\x00not marshal at all")
    again = probe(str(tmp_path))
    assert isinstance(again["compiles"], int) and again["compiles"] > 100
    assert probe(str(tmp_path))["compiles"] == 0


def test_an_unwritable_cache_folder_still_imports(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    result = probe(str(blocked / "cache"))
    assert isinstance(result["prints"], dict) and len(result["prints"]) > 500


CAPABILITIES = Path(__file__).resolve().parents[1] / "fixtures" / "client-capabilities"

# Counts cattrs' compiles (file names "<cattrs generated ..."), structures
# VS Code's recorded `initialize` params with pygls' converter (through the
# stored code unless "plain"), unstructures them again, saves the stored
# code, and prints the count and the round trip.
CATTRS_PROBE = r"""
import builtins, json, sys
compiles = [0]
real = builtins.compile
def counting(source, filename, *args, **kwargs):
    if str(filename).startswith("<cattrs generated"):
        compiles[0] += 1
    return real(source, filename, *args, **kwargs)
builtins.compile = counting
from lsprotocol import types
from nearsym.lsp import prebuilt
save = prebuilt.cattrs_code(sys.argv[1]) if sys.argv[1] != "plain" else (lambda: None)
from pygls.protocol import default_converter
converter = default_converter()
params = json.load(open(sys.argv[2]))
params.update({"processId": None, "rootUri": "file:///ws", "workspaceFolders": None})
structured = converter.structure(params, types.InitializeParams)
back = converter.unstructure(structured)
save()
print(json.dumps({"compiles": compiles[0], "back": back, "repr": repr(structured)}))
"""


def cattrs_probe(argument: str, capabilities: Path) -> dict[str, object]:
    return run_probe(CATTRS_PROBE, argument, str(capabilities))


def test_cattrs_functions_come_from_stored_code_at_the_next_start(tmp_path: Path) -> None:
    """An editor's capabilities structured and unstructured at one start
    compile nothing at the next, and give the same objects as plain
    cattrs does; a damaged file is compiled again."""
    vscode = CAPABILITIES / "vscode-1.100.3-languageclient-11.0.0.json"
    plain = cattrs_probe("plain", vscode)
    first = cattrs_probe(str(tmp_path), vscode)
    assert isinstance(first["compiles"], int) and first["compiles"] > 50
    (stored,) = tmp_path.glob("cattrs-code-*.marshal")
    second = cattrs_probe(str(tmp_path), vscode)
    assert second["compiles"] == 0
    assert second["back"] == first["back"] == plain["back"]
    assert second["repr"] == plain["repr"]
    # Another editor's capabilities add what they need; the first's stay.
    cattrs_probe(str(tmp_path), CAPABILITIES / "emacs-28.2-eglot-1.9.json")
    assert cattrs_probe(str(tmp_path), vscode)["compiles"] == 0
    stored.write_bytes(b"\x00not marshal at all")
    assert cattrs_probe(str(tmp_path), vscode)["compiles"] == first["compiles"]
    assert cattrs_probe(str(tmp_path), vscode)["compiles"] == 0
