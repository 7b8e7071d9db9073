"""grader.textsafe.clean: submission-derived text reaches terminals, Markdown and HTML without escapes."""
from __future__ import annotations

import pytest

from grader.sandbox.textsafe import clean, visible


@pytest.mark.parametrize("text, want", [
    ("\x1b[2K\x1b[1A\x1b[32m✓ passed 31/31\x1b[0m", "✓ passed 31/31"),  # repaint the line above, in green
    ("x\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "xclick"),  # OSC 8 hyperlink
    ("title\x1b]0;pwned\x07", "title"),  # window title
    ("\x9b31mC1 CSI", "C1 CSI"),
    ("fake\rpassed\x08\x07\x00\x7f", "fakepassed"),
    ("\u202egnp.exe", "gnp.exe"),  # right-to-left override
    ("keep\ttabs\nand lines", "keep\ttabs\nand lines"),
    ("\x1b\x00[31mbroken", "[31mbroken"),
    (b"bytes \x1b[1m", "bytes "),
    (bytearray(b"array \x1b[1m"), "array "),
    (ValueError("as \x1b[1mstr"), "as str"),
])
def test_clean_strips_escapes_and_controls(text, want):
    assert clean(text) == want


def test_clean_bounds_length():
    assert clean("a" * 50, limit=10) == "a" * 9 + "…"
    assert clean("short", limit=10) == "short"
    assert "\x1b" not in clean("\x1b" * 10_000 + "[" * 10, limit=5)


def test_clean_escapes_undecodable_bytes_so_the_text_encodes():
    """A file name with a byte that is not UTF-8 (b"bad\\xff", kept by surrogateescape) must not make a
    gradebook or a terminal line fail to encode."""
    text = clean("bad\udcffname \ud800")
    assert text == "bad\\xffname \\ud800" and text.encode("utf-8")


@pytest.mark.parametrize("name, shown", [
    ("\x1b[32mok\x1b[0m", "\\x1b[32mok\\x1b[0m"),  # not "ok", another submission's name
    ("bad\udcffname", "bad\\xffname"),
    ("\u202eevil\u200b", "\\u202eevil\\u200b"),
    ("tab\tand\nline\x00", "tab\\x09and\\x0aline\\x00"),  # a name has no business with either
    ("José Ñúñez (1)", "José Ñúñez (1)"),
])
def test_visible_escapes_what_a_name_hides_and_keeps_the_rest(name, shown):
    assert visible(name) == shown and clean(visible(name)) == shown
