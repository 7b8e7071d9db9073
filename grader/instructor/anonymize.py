"""Stable pseudonyms for blind review (`grade batch --anonymize`).

A submission's pseudonym is "anon-" and the first 10 hex digits of HMAC-SHA256(key, its NFC name): the same
person gets the same pseudonym on every run with the same key, and nobody without the key can tell who it is
(a plain hash of a name is reversed by hashing the class list). The key is 32 random bytes in a file of its own,
created 0600 if absent, outside the outputs (by default in the user's data folder), so the gradebook, reports
and cohort page can be handed to reviewers without it. The real name, the archive's file name and an LMS
download's user id are replaced in every text the grader writes about a submission (notes, file paths).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
import unicodedata
from pathlib import Path

from grader.instructor import UsageError

KEY_BYTES = 32


def default_key_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("attention-kit") / "anonymize.key"


def load_key(path: Path | None = None) -> tuple[bytes, Path, bool]:
    """(key, its file, whether it was created now); a key file others can read or write is refused."""
    path = Path(path) if path is not None else default_key_path()
    created = False
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(KEY_BYTES) + "\n")
            created = True
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd) as f:
            info = os.fstat(f.fileno())
            text = f.read(4 * KEY_BYTES).strip()
    except OSError as exc:
        raise UsageError(f"cannot use {path} as the pseudonym key: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise UsageError(f"{path}: the pseudonym key must be a file of yours that only you can read (chmod 600)")
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise UsageError(f"{path} is not a pseudonym key (64 hex digits); move it away to create a new one")
    return bytes.fromhex(text), path, created


def pseudonym(key: bytes, name: str) -> str:
    digest = hmac.new(key, unicodedata.normalize("NFC", name).encode("utf-8"), hashlib.sha256).hexdigest()
    return f"anon-{digest[:10]}"


def scrub(text: str, secrets_: list[str], alias: str) -> str:
    """text with every secret (longest first, any case and Unicode normalisation) replaced by alias."""
    text = unicodedata.normalize("NFC", text)
    for secret in sorted({unicodedata.normalize("NFC", s) for s in secrets_ if s}, key=len, reverse=True):
        text = re.sub(re.escape(secret), alias, text, flags=re.IGNORECASE)
    return text


def anonymize(sub, key: bytes, secrets_: list[str]) -> None:
    """Rename a Submission to its pseudonym and take its name out of everything said about it."""
    alias = pseudonym(key, sub.name)
    hidden = [sub.name, *secrets_]
    sub.notes = [scrub(n, hidden, alias) for n in sub.notes]
    sub.problem = scrub(sub.problem, hidden, alias)
    for table in (sub.located, sub.near, sub.rejected):
        for number in table:
            table[number] = scrub(table[number], hidden, alias)
    sub.name = alias
