"""Frames between the grader and its worker: a JSON header plus tensors in safetensors format.

Nothing is ever unpickled. A frame is: 8-byte header length, UTF-8 JSON header,
8-byte payload length, safetensors payload (possibly empty).
"""
from __future__ import annotations

import json
import os
import re
import signal
import struct

MAX_HEADER = 1 << 20
STACK_SIGNAL = signal.SIGUSR1  # asks a worker whose budget ran out where it is: it writes faulthandler's dump
MAX_STACK = 64 << 10  # bytes of that dump the grader reads
_STACK_FRAME = re.compile(rb'^ *File "([^"\n]{1,1000})", line (\d{1,7}) in [^\n]{0,200}$', re.M)
MAX_DEPTH = 5  # {"buffers": {"name": [[2, 3], "float64"]}} is the deepest reply the worker sends
MAX_ITEMS = 20_000  # values in one header, all levels together
MAX_TEXT = 4096  # characters in one string
# what each key of a reply header may hold; anything else is not a reply the worker sends
REPLY_KEYS = {"ok": (bool,), "error": (dict,), "outputs": (list,), "is_class": (bool,), "callable": (bool,),
              "is_module": (bool,), "parameters": (list, type(None)), "forward_parameters": (list,),
              "params": (dict,), "buffers": (dict,), "raised": (str, dict, type(None)), "largest": (dict,),
              "entries": (list,), "consts": (list,), "truncated": (bool,)}  # entries, consts, truncated, raised as a dict: the trace op
BATCHED = ("run", "describe", "construct_raises")  # the calls a batch request may hold (never load, trace or a batch)
MAX_PAYLOAD = 64 << 20  # the grader's probes return kilobytes; anything near this is an attack or a bug
_LEN = struct.Struct(">Q")
READY = b"\x06"  # the byte a worker sends once booted, before it imports the submission; a frame
# {"state": isolation.STATE} follows it


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed frame."""


def encode(header: dict, tensors: dict | None = None) -> bytes:
    head = json.dumps(header).encode()
    body = safetensors_bytes(tensors) if tensors else b""
    return _LEN.pack(len(head)) + head + _LEN.pack(len(body)) + body


def safetensors_bytes(tensors: dict) -> bytes:
    """tensors in the safetensors format, as safetensors.torch.save writes it (and its load reads it), without
    its checks for shared storage, which cost six times the writing (names here are distinct, tensors copied)."""
    import torch  # imported late: the grader spawns its worker before torch loads

    meta, chunks, at = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes()
        meta[name] = {"dtype": _SAFETENSORS_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        chunks.append(data)
        at += len(data)
    head = json.dumps(meta, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the format aligns the data to 8 bytes
    return struct.pack("<Q", len(head)) + head + b"".join(chunks)


class _Dtypes(dict):
    """torch dtype -> safetensors' name for it, the names safetensors.torch reads (filled on first use)."""

    def __missing__(self, dtype):
        from safetensors.torch import _TYPES

        self.update({value: name for name, value in _TYPES.items()})
        if dtype not in self:
            raise ValueError(f"safetensors cannot hold a tensor of dtype {dtype}")
        return self[dtype]


_SAFETENSORS_DTYPES = _Dtypes()


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
    """(header, tensors) of one frame; any failure to read it is a ProtocolError, never another exception."""
    from safetensors.torch import load as st_load

    try:
        (hlen,) = _LEN.unpack_from(frame, 0)
        header = json.loads(frame[8 : 8 + hlen].decode())
    except (ValueError, RecursionError, MemoryError, struct.error) as exc:  # JSON and UTF-8 errors are ValueErrors
        raise ProtocolError(f"unreadable header: {type(exc).__name__}: {str(exc)[:120]}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    body = frame[16 + hlen :]
    try:
        tensors = st_load(body) if body else {}
    except Exception as exc:  # safetensors raises its own error types
        raise ProtocolError(f"unreadable tensors: {type(exc).__name__}: {str(exc)[:120]}") from None
    return header, tensors


def check_reply(header: dict) -> dict:
    """The worker's reply header if it has the shape of one: known keys of the right types, nesting at
    most MAX_DEPTH, at most MAX_ITEMS values, strings at most MAX_TEXT long. Raises ProtocolError."""
    for key, value in header.items():
        if key not in REPLY_KEYS:
            raise ProtocolError(f"unexpected key {key[:40]!r} in the reply")
        if not isinstance(value, REPLY_KEYS[key]):
            raise ProtocolError(f"{key} in the reply is a {type(value).__name__}")
    stack, items = [(header, 1)], 0
    while stack:
        value, depth = stack.pop()
        items += 1
        if depth > MAX_DEPTH or items > MAX_ITEMS:
            raise ProtocolError("the reply is nested too deeply or too large")
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise ProtocolError("the reply holds an overlong string")
        if isinstance(value, dict):
            stack += [(k, depth + 1) for k in value] + [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
    return header


def check_batch_reply(header: dict, sent: int) -> dict:
    """The worker's reply to a batch of sent calls: {"ok": true, "replies": [...]}, one reply per call run (at
    least one, at most sent), each checked as check_reply checks a single one, and only the last one failed; or
    an error reply for the batch as a whole. Raises ProtocolError."""
    if header.get("ok") is not True:
        return check_reply(header)
    replies = header.get("replies")
    if set(header) != {"ok", "replies"} or not isinstance(replies, list) or not 1 <= len(replies) <= sent:
        raise ProtocolError("the reply to a batch is not {\"ok\": true, \"replies\": [one per call run]}")
    for i, reply in enumerate(replies):
        if not isinstance(reply, dict):
            raise ProtocolError(f"reply {i} of the batch is a {type(reply).__name__}")
        check_reply(reply)
        if reply.get("ok") is not True and i < len(replies) - 1:
            raise ProtocolError("the batch went on after a call that failed")
    return header


def split_batch_tensors(tensors: dict, count: int) -> list[dict]:
    """A batch reply's tensors, named "<call>.<name>", as one dict per call; any other name is a ProtocolError."""
    split: list[dict] = [{} for _ in range(count)]
    for key, value in tensors.items():
        index, dot, name = key.partition(".")
        if not dot or not (index.isascii() and index.isdigit()) or int(index) >= count or index != str(int(index)):
            raise ProtocolError(f"tensor {key[:40]!r} of a batch reply names no call")
        split[int(index)][name] = value
    return split


def check_state(header: dict) -> dict[str, str]:
    """The boot report's {"state": {protection: what held}}, checked: at most 32 short strings."""
    state = header.get("state")
    if len(header) != 1 or not isinstance(state, dict) or len(state) > 32:
        raise ProtocolError("the boot report is not {\"state\": {...}}")
    for key, value in state.items():
        if not isinstance(value, str) or len(key) > 40 or len(value) > MAX_TEXT:
            raise ProtocolError(f"the boot report's {key[:40]!r} is not a short string")
    return state


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


def stuck_line(dump: bytes, name: str, lines: int) -> int | None:
    """The innermost line of the file called name in a worker's stack dump (faulthandler's format, innermost call
    first), if it is a line of that file (1..lines). The dump is the worker's, so under the submission's control:
    read bounded, trusted for nothing but this hint."""
    for frame in _STACK_FRAME.finditer(dump[:MAX_STACK]):
        if os.path.basename(frame[1].decode("utf-8", "replace")) == name:
            line = int(frame[2])
            return line if 1 <= line <= lines else None
    return None
