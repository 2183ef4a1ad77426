"""nearsym.el as a package: checkdoc and the byte compiler (warnings as
errors) say nothing, its headers name what the code needs (`project-root`
is Emacs 28's), and didOpen's languageId is the LSP language identifier,
not the mode's name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import require

pytestmark = pytest.mark.editors

PACKAGE = Path(__file__).resolve().parents[2] / "editors" / "emacs"


def emacs_batch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    emacs = shutil.which("emacs")
    require(emacs is not None, "emacs")
    assert emacs
    work = tmp_path / "emacs"
    shutil.copytree(PACKAGE, work)
    return subprocess.run(
        [emacs, "--batch", "-q", "-L", str(work), *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )


def said(run: subprocess.CompletedProcess[str]) -> list[str]:
    """What Emacs printed, without its `Loading ...` lines."""
    return [
        line
        for line in (run.stdout + run.stderr).splitlines()
        if line.strip() and not line.startswith("Loading ")
    ]


def test_checkdoc_is_clean(tmp_path: Path) -> None:
    run = emacs_batch(
        tmp_path, "--eval", '(progn (require (quote checkdoc)) (checkdoc-file "nearsym.el"))'
    )
    assert run.returncode == 0 and said(run) == [], said(run)


def test_byte_compiles_without_a_warning(tmp_path: Path) -> None:
    run = emacs_batch(
        tmp_path,
        "--eval",
        "(setq byte-compile-error-on-warn t)",
        "-f",
        "batch-byte-compile",
        "nearsym.el",
    )
    assert run.returncode == 0 and said(run) == [], said(run)


def test_headers_name_author_and_emacs_28(tmp_path: Path) -> None:
    run = emacs_batch(
        tmp_path,
        "--eval",
        "(with-temp-buffer (insert-file-contents \"nearsym.el\") (require 'lisp-mnt) (require 'package)"
        ' (princ (format "%S\\n%S\\n" (lm-header "author") (package-desc-reqs (package-buffer-info)))))',
    )
    authors, requires = run.stdout.splitlines()[-2:]
    assert "nearsym" in authors, run.stdout + run.stderr
    assert "(emacs (28 1))" in requires, run.stdout + run.stderr


def test_language_id_is_the_lsp_identifier(tmp_path: Path) -> None:
    run = emacs_batch(
        tmp_path,
        "--eval",
        "(progn (require 'nearsym)"
        " (dolist (mode '(python-mode c++-mode sh-mode js-mode c-mode ruby-mode))"
        '   (with-temp-buffer (funcall mode) (princ (format "%s " (nearsym--language-id))))))',
    )
    assert run.stdout.split() == ["python", "cpp", "shellscript", "javascript", "c", "ruby"], said(
        run
    )
