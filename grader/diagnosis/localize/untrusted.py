"""The submission's trace, as the worker sent it: untrusted. Every entry is checked and anything malformed dropped."""
from __future__ import annotations

import logging
import re

import torch

from grader.diagnosis.localize.model import Traced
from grader.sandbox.trace import MAX_ELEMENTS, MAX_ENTRIES

log = logging.getLogger(__name__)
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def validate(reply, out, n_lines: int) -> tuple[list[Traced], dict | None]:
    """Entries that are well formed in every respect, and the exception the forward raised (if any)."""
    if not isinstance(reply, dict) or not isinstance(out, dict):
        log.debug("trace reply is not a dict: no entries")
        return [], None
    entries, budget, dropped = [], MAX_ELEMENTS, 0
    raw = reply.get("entries")
    for i, e in enumerate(raw[:MAX_ENTRIES] if isinstance(raw, list) else []):
        if not isinstance(e, dict):
            dropped += 1
            continue
        op, line, shape, dtype = e.get("op"), e.get("line"), e.get("shape"), e.get("dtype")
        t = out.get(f"trace.{i}")
        if not (isinstance(op, str) and isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= n_lines
                and isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)
                and dtype in DTYPES and type(t) is torch.Tensor and t.dtype == DTYPES[dtype]
                and list(t.shape) == shape and 0 < t.numel() <= budget):
            dropped += 1
            continue
        budget -= t.numel()
        data = e.get("data", True)
        entries.append(Traced(re.sub(r"[^\w.]", "", op)[:40] or "op", line, t, data if isinstance(data, bool) else True))
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
