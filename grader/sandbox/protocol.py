"""Frames between the grader and its worker: a JSON header plus tensors in safetensors format.

Nothing is ever unpickled. A frame is: 8-byte header length, UTF-8 JSON header,
8-byte payload length, safetensors payload (possibly empty).
"""
from __future__ import annotations

import json
import os
import struct

MAX_HEADER = 1 << 20
MAX_PAYLOAD = 64 << 20  # the grader's probes return kilobytes; anything near this is an attack or a bug
_LEN = struct.Struct(">Q")
READY = b"\x06"  # the one byte a worker sends once booted, before it imports the submission


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed frame."""


def encode(header: dict, tensors: dict | None = None) -> bytes:
    from safetensors.torch import save as st_save  # imported late: the grader spawns its worker before torch loads

    head = json.dumps(header).encode()
    body = st_save({k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}) if tensors else b""
    return _LEN.pack(len(head)) + head + _LEN.pack(len(body)) + body


def split_lengths(buf: bytes) -> int | None:
    """Total size of the frame at the start of buf, or None while it is still incomplete."""
    if len(buf) < 8:
        return None
    (hlen,) = _LEN.unpack_from(buf, 0)
    if hlen > MAX_HEADER:
        raise ProtocolError(f"header of {hlen} bytes is too large")
    if len(buf) < 16 + hlen:
        return None
    (plen,) = _LEN.unpack_from(buf, 8 + hlen)
    if plen > MAX_PAYLOAD:
        raise ProtocolError(f"a reply of {plen >> 20} MB exceeds the grader's {MAX_PAYLOAD >> 20} MB limit")
    return 16 + hlen + plen


def decode(frame: bytes) -> tuple[dict, dict]:
    from safetensors.torch import load as st_load

    (hlen,) = _LEN.unpack_from(frame, 0)
    try:
        header = json.loads(frame[8 : 8 + hlen].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"unreadable header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    body = frame[16 + hlen :]
    try:
        tensors = st_load(body) if body else {}
    except Exception as exc:  # safetensors raises its own error types
        raise ProtocolError(f"unreadable tensors: {exc}") from None
    return header, tensors


def read_frame(fd: int) -> bytes | None:
    """Blocking read of one frame from a file descriptor (the worker's side). None at end of input."""
    buf = b""
    while True:
        need = split_lengths(buf)
        if need is not None and len(buf) >= need:
            return buf
        chunk = os.read(fd, 1 << 20 if need is None else min(1 << 24, need - len(buf)))
        if not chunk:
            return None
        buf += chunk
