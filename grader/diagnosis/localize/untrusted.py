"""The submission's trace, as the worker sent it: untrusted. Every entry is checked and anything malformed dropped."""
from __future__ import annotations

import logging
import re

import torch

from grader.diagnosis.localize.model import Traced
from grader.sandbox.trace import MAX_CONST_ELEMENTS, MAX_CONSTS, MAX_ELEMENTS, MAX_ENTRIES, MAX_USES

log = logging.getLogger(__name__)
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
CONST_DTYPES = {**DTYPES, "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
                "int32": torch.int32, "int64": torch.int64}


def _uses(value) -> tuple:
    """The consts an entry read: at most MAX_USES indices, each -1 (not recorded) or below MAX_CONSTS; else none."""
    if not isinstance(value, list) or len(value) > MAX_USES:
        return ()
    if not all(isinstance(u, int) and not isinstance(u, bool) and -1 <= u < MAX_CONSTS for u in value):
        return ()
    return tuple(value)


def _entries(raw, out: dict, prefix: str, n_lines: int, limit: int, budget: int, dtypes: dict) -> list[Traced | None]:
    """The well-formed entries of one list, in order; a malformed one is None (indices stay those the worker sent)."""
    entries = []
    for i, e in enumerate(raw[:limit] if isinstance(raw, list) else []):
        t = out.get(f"{prefix}.{i}")
        op, line, shape, dtype = (e.get("op"), e.get("line"), e.get("shape"), e.get("dtype")) if isinstance(e, dict) else (None,) * 4
        if not (isinstance(op, str) and isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= n_lines
                and isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)
                and dtype in dtypes and type(t) is torch.Tensor and t.dtype == dtypes[dtype]
                and list(t.shape) == shape and 0 < t.numel() <= budget):
            entries.append(None)
            continue
        budget -= t.numel()
        data = e.get("data", True)
        entries.append(Traced(re.sub(r"[^\w.]", "", op)[:40] or "op", line, t, data if isinstance(data, bool) else True,
                              _uses(e.get("uses"))))
    return entries


def validate_consts(reply, out, n_lines: int) -> list[Traced | None]:
    """The trace's consts (masks, tables: tensors that are no floating data), by the index entries' `uses` name;
    a malformed one is None."""
    if not isinstance(reply, dict) or not isinstance(out, dict):
        return []
    return _entries(reply.get("consts"), out, "const", n_lines, MAX_CONSTS, MAX_CONST_ELEMENTS, CONST_DTYPES)


def validate(reply, out, n_lines: int) -> tuple[list[Traced], dict | None]:
    """Entries that are well formed in every respect, and the exception the forward raised (if any)."""
    if not isinstance(reply, dict) or not isinstance(out, dict):
        log.debug("trace reply is not a dict: no entries")
        return [], None
    found = _entries(reply.get("entries"), out, "trace", n_lines, MAX_ENTRIES, MAX_ELEMENTS, DTYPES)
    entries = [e for e in found if e is not None]
    dropped = len(found) - len(entries)
    if dropped:
        log.debug("dropped %d malformed trace entries", dropped)
    raised = reply.get("raised")
    if isinstance(raised, dict):
        kind, line = raised.get("type"), raised.get("line")
        ok_line = isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= n_lines
        raised = {"type": re.sub(r"[^\w.]", "", kind)[:80] if isinstance(kind, str) else "an exception",
                  "line": line if ok_line else None}
    else:
        raised = None
    return entries, raised
