"""Reads a submission once, in the grader: bounded, UTF-8 or a short list of cookie encodings, and a
notebook's code cells. The text returned is the one the policy checks and the worker compiles."""
from __future__ import annotations

import ast
import re
from pathlib import Path

NOTEBOOK_HELP = ("hand in the exercise as a .py file (in Jupyter: File > Download as > Python; "
                 "or `jupyter nbconvert --to script NOTEBOOK.ipynb`)")


class Unreadable(Exception):
    """The file is not Python source the grader can read (the message says what to hand in)."""


MAX_BYTES = 1 << 20  # one exercise file; a larger one is refused before it is decoded
# Cookie encodings the grader decodes (PEP 263), by normalised name: stateless codecs that decode in
# linear time. Any other cookie (punycode, utf-7, rot13, a codec that runs code) is refused.
COOKIES = {
    "utf-8": "utf-8", "utf8": "utf-8", "utf-8-sig": "utf-8",
    "ascii": "ascii", "us-ascii": "ascii",
    "latin-1": "latin-1", "latin1": "latin-1", "iso-8859-1": "latin-1", "iso8859-1": "latin-1", "l1": "latin-1",
    "iso-8859-15": "iso8859-15", "iso8859-15": "iso8859-15", "latin-9": "iso8859-15",
    "cp1252": "cp1252", "windows-1252": "cp1252",
    "gbk": "gbk", "gb2312": "gbk", "gb18030": "gb18030", "big5": "big5",
    "shift-jis": "shift_jis", "sjis": "shift_jis", "euc-jp": "euc_jp", "euc-kr": "euc_kr",
}
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")


def read_submission(path: Path) -> str:
    """The submission's text, decoded once; a notebook's code cells joined. The policy checks this text
    and the worker compiles this same text (a str: compile() ignores any cookie in it)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise Unreadable(f"{path.name} is larger than {MAX_BYTES >> 20} MB; an exercise file is far smaller")
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(f"{path.name} could not be read ({exc.strerror or exc})") from None
    if path.suffix == ".ipynb":
        return notebook_code(data)
    return decode(data, path.name)


def decode(data: bytes, name: str = "the file") -> str:
    """Source bytes as text: UTF-8 (with or without a BOM) or a cookie from COOKIES; newlines as \\n."""
    if len(data) > MAX_BYTES:
        raise Unreadable(f"{name} is larger than {MAX_BYTES >> 20} MB; an exercise file is far smaller")
    if b"\0" in data:
        raise Unreadable(f"{name} holds binary data, not Python source: {NOTEBOOK_HELP.split(' (')[0]}")
    encoding = "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    else:
        cookie = _cookie(data)
        if cookie is not None:
            encoding = COOKIES.get(cookie.decode("ascii", "replace").lower().replace("_", "-"))
            if encoding is None:
                raise Unreadable(f"{name} declares the encoding {cookie.decode('ascii', 'replace')[:40]!r}, which the "
                                 "grader does not read; save it as UTF-8 and remove the coding line")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{name} is not valid {encoding} text (byte {exc.start}); save it as UTF-8") from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _cookie(data: bytes) -> bytes | None:
    """The encoding a PEP 263 line names in the first two lines (any of \\r\\n, \\r, \\n ends a line)."""
    lines = re.split(rb"\r\n|\r|\n", data[:2048], maxsplit=2)[:2]
    for i, line in enumerate(lines):
        found = _COOKIE.match(line)
        if found:
            return found[1]
        if not _BLANK_OR_COMMENT.match(line):
            return None
    return None


def notebook_code(data: bytes) -> str:
    """The code cells of a notebook, in order; IPython magics and shell lines are commented out."""
    import nbformat

    try:
        nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception:  # nbformat raises many kinds for a damaged notebook
        raise Unreadable(f"this notebook could not be read; {NOTEBOOK_HELP}") from None
    cells = [_without_magics(cell.source) for cell in nb.cells if cell.get("cell_type") == "code"]
    if not any(c.strip() for c in cells):
        raise Unreadable(f"this notebook has no code cells; {NOTEBOOK_HELP}")
    return "\n\n\n".join(cells) + "\n"


def cell_code(magic: str, body: str) -> str:
    """A `%%grade` cell as a file the grader reads: the magic line commented out as in a notebook, so line N
    of the file is line N of the cell."""
    return _without_magics(f"{magic}\n{body}") + "\n"


def _without_magics(code: str) -> str:
    """IPython magics and shell lines (%, %%, !) commented out; every other line as it is."""
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines())


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
