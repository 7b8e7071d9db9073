"""Text a submission controls, made safe to show: no terminal escapes, no control characters.

Exception messages, type names, printed output and file names come from code the grader does not
trust. ``clean`` removes ANSI/VT escape sequences (which can repaint a terminal with a fake "passed"
line), other control characters (carriage returns, backspaces, bells, C1 controls) and Unicode
bidirectional overrides, keeping newlines and tabs; a lone surrogate (an undecodable byte of a file name, as
Python's surrogateescape keeps it) becomes its escaped form (\\xff), so the text always encodes as UTF-8.
``visible`` is for names (a submission's, a file's): every such character is kept, escaped, so that the
reader sees what was there (and "\\x1b[32mok" is not shown as another submission's "ok"). Escaping for
Markdown or HTML is a separate step done by whoever renders into those formats; run ``clean`` first.
"""
from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI ... final byte (7- and 8-bit forms)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC ... ST
    r"|\x1b[ -/]*[0-~]?"  # any other escape sequence (charset selection, cursor save, reset)
)
# C0 controls except tab and newline, DEL, C1 controls, zero-width characters, bidi marks, embeddings,
# overrides and isolates, and a stray byte-order mark: all can hide or reorder what a reader sees
_INVISIBLE = "\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_HIDDEN = re.compile(f"[\x00-\x1f{_INVISIBLE}\ud800-\udfff]")  # visible(): tabs and newlines escaped too


def _escaped(match: re.Match) -> str:
    code = ord(match[0])
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """A name with its control, invisible and bidi characters and undecodable bytes escaped (\\x1b, \\u202e,
    \\xff); printable text is kept as it is."""
    return _HIDDEN.sub(_escaped, text)


def clean(text, limit: int | None = None) -> str:
    """text without escape sequences or control characters (newlines and tabs kept), at most limit characters."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = str(text)
    text = _CONTROLS.sub("", _ESCAPES.sub("", _SURROGATES.sub(_escaped, text.replace("\r\n", "\n"))))
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text
