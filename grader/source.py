"""Reads a submission as Python would (BOM, CRLF, encoding cookie), and a notebook's code cells."""
from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

NOTEBOOK_HELP = ("hand in the exercise as a .py file (in Jupyter: File > Download as > Python; "
                 "or `jupyter nbconvert --to script NOTEBOOK.ipynb`)")


class Unreadable(Exception):
    """The file is not Python source the grader can read (the message says what to hand in)."""


def read_submission(path: Path) -> str:
    """The submission's source text, decoded as the interpreter decodes it; a notebook's code cells joined."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".ipynb":
        return notebook_code(data)
    if b"\0" in data:
        raise Unreadable(f"{path.name} holds binary data, not Python source: {NOTEBOOK_HELP.split(' (')[0]}")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise Unreadable(f"{path.name} is not readable Python source ({exc}); save it as UTF-8 text") from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def notebook_code(data: bytes) -> str:
    """The code cells of a notebook, in order; IPython magics and shell lines are commented out."""
    import nbformat

    try:
        nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception:  # nbformat raises many kinds for a damaged notebook
        raise Unreadable(f"this notebook could not be read; {NOTEBOOK_HELP}") from None
    cells = []
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        lines = [f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.splitlines()]
        cells.append("\n".join(lines))
    if not any(c.strip() for c in cells):
        raise Unreadable(f"this notebook has no code cells; {NOTEBOOK_HELP}")
    return "\n\n\n".join(cells) + "\n"


def is_blank(source: str) -> bool:
    """Whether the file defines nothing: empty, or only a docstring, comments, imports and `pass`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the policy check reports why it cannot parse
        return False
    inert = (ast.Import, ast.ImportFrom, ast.Pass)
    body = [n for n in tree.body if not isinstance(n, inert)
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return not body


def python_copy(path: Path, source: str) -> Path:
    """path itself, or for a readable notebook a temporary .py file holding its code (the caller deletes it)."""
    if Path(path).suffix != ".ipynb" or not source:
        return Path(path)
    import tempfile

    fd, name = tempfile.mkstemp(prefix="attention-kit-notebook-", suffix=".py")
    with open(fd, "w", encoding="utf-8") as f:
        f.write(source)
    return Path(name)
