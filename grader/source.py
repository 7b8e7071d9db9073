"""Reads a submission once, in the grader: bounded, UTF-8 or a short list of cookie encodings, and a
notebook's code cells. The text returned is the one the policy checks and the worker compiles; for a
notebook, Source.cells maps each line of that text back to its cell and its line in the cell."""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Source:
    """A submission's text and, for a notebook, where each of its lines comes from: cells[n - 1] is
    (cell, line in that cell) for line n, both counted from 1 (every cell counts, Markdown included),
    None for the blank lines between two cells."""

    text: str
    cells: tuple[tuple[int, int] | None, ...] | None = None

    def cell_of(self, line) -> tuple[int, int] | None:
        if self.cells is None or not isinstance(line, int) or isinstance(line, bool) or not 1 <= line <= len(self.cells):
            return None
        return self.cells[line - 1]

    def where(self, line: int) -> str:
        """How a person finds the line: "line 12", or "cell 3, line 4" in a notebook."""
        cell = self.cell_of(line)
        return f"cell {cell[0]}, line {cell[1]}" if cell else f"line {line}"

    def places(self, text: str) -> str:
        """text with each "line N" the grader wrote about this file as "cell C, line L" (a notebook)."""
        if not self.cells:
            return text
        return _LINE.sub(lambda m: self.where(int(m[1])) if self.cell_of(int(m[1])) else m[0], text)


_LINE = re.compile(r"(?<!, )\bline (\d{1,7})\b")  # not one already placed ("cell 3, line 4")


def read_submission(path: Path) -> str:
    """The submission's text, decoded once; a notebook's code cells joined. The policy checks this text
    and the worker compiles this same text (a str: compile() ignores any cookie in it)."""
    return read_source(path).text


def shown_source(path: Path) -> Source:
    """What views show of a graded file (reports, similarity): as graded, else its bytes as UTF-8."""
    try:
        return read_source(path)
    except Unreadable:
        return Source(Path(path).read_bytes()[:MAX_BYTES].decode("utf-8", "replace"))


def read_source(path: Path) -> Source:
    """The submission as read_submission reads it, with a notebook's map from lines to cells."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise Unreadable(f"{path.name} is larger than {MAX_BYTES >> 20} MB; an exercise file is far smaller")
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(f"{path.name} could not be read ({exc.strerror or exc})") from None
    if path.suffix == ".ipynb":
        return notebook_source(data)
    return Source(decode(data, path.name))


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


def notebook_source(data: bytes) -> Source:
    """The code cells of a notebook, in order, two blank lines apart; IPython magics and shell lines are
    commented out (the line numbers stay). Raises Unreadable for a damaged notebook or one without code."""
    import nbformat

    try:
        with warnings.catch_warnings():  # a notebook without cell ids is read all the same
            warnings.simplefilter("ignore")
            nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception:  # nbformat raises many kinds for a damaged notebook
        raise Unreadable(f"this notebook could not be read; {NOTEBOOK_HELP}") from None
    lines: list[str] = []
    cells: list[tuple[int, int] | None] = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        if lines:
            lines += ["", ""]
            cells += [None, None]
        for i, line in enumerate(_without_magics(cell.source).splitlines(), start=1):
            lines.append(line)
            cells.append((number, i))
    if not any(line.strip() for line in lines):
        raise Unreadable(f"this notebook has no code cells; {NOTEBOOK_HELP}")
    return Source("\n".join(lines) + "\n", tuple(cells))


def span(text: str, line: int) -> tuple[int, int] | None:
    """The columns [start, end) of what the statement on line computes (the value of an assignment, a return
    or an expression), when that statement sits on this one line; None when it is not known."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line == node.end_lineno:
            found = node
    if isinstance(found, ast.Assign) and not all(isinstance(t, ast.Name) for t in found.targets):
        return None  # an item or attribute written: the whole statement is what happens there
    value = getattr(found, "value", None)
    if not isinstance(value, ast.expr) or value.lineno != line or value.end_lineno != line:
        return None
    raw = text.splitlines()[line - 1].encode("utf-8")  # ast counts columns in UTF-8 bytes
    start = len(raw[:value.col_offset].decode("utf-8", "ignore"))
    return start, start + len(raw[value.col_offset:value.end_col_offset].decode("utf-8", "ignore"))


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
