"""The explainer topics, in display order, and the module that computes each one's live numbers.

The numbers are computed with torch the first time a topic is shown and kept in the user's cache directory,
keyed by the kit's digest and torch's version (the same code and the same torch give the same numbers: fixed
seeds), so later renders never import torch. An unreadable or unwritable cache costs only that time.
"""
from __future__ import annotations

import json
import os
import tempfile
from importlib import import_module
from pathlib import Path

# topic id -> module under grader.explain holding a function of the same name (None: no live numbers)
LIVE = {
    "qkv": "live",
    "seq2seq": None,
    "scaling": "live",
    "self_attention": "live",
    "causal_mask": "live",
    "buffer": "live_torch",
    "multi_head": "live",
    "view_transpose": "live_torch",
    "module_call": "live_torch",
    "fused_sdpa": "live_torch",
    "complexity": "live_memory",
    "kv_cache": "live_memory",
    "mqa_gqa": "live_memory",
    "masked_rows": "live_torch",
    "fp16_fill": "live_torch",
    "online_softmax": "live_online",
    "rope": "live_rope",
}
TOPICS = tuple(LIVE)
LANGS = ("en", "zh")
FORMATS = ("term", "md", "html")


def compute(topic: str) -> dict:
    """Torch is imported only here, so listing topics stays fast."""
    module = LIVE[topic]
    data = getattr(import_module(f"grader.explain.{module}"), topic)() if module else {}
    return {"values": data.get("values", {}), "tables": data.get("tables", {}), "maps": data.get("maps", {})}


def cache_file() -> Path:
    from grader.provenance import kit_digest
    from grader.workspace import cache_dir

    return cache_dir() / f"explain-{kit_digest()}-torch-{torch_version()}.json"


def live_data(topic: str) -> dict:
    """The topic's numbers: from the cache when this kit and this torch computed them before, else computed
    (and every topic's numbers kept as JSON: what the templates read survives the round trip)."""
    if LIVE[topic] is None:
        return compute(topic)
    path = cache_file()
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cached = {}
    if isinstance(cached, dict) and isinstance(cached.get(topic), dict):
        return cached[topic]
    data = json.loads(json.dumps(compute(topic)))  # as a later render reads it back: tuples become lists
    cached = cached if isinstance(cached, dict) else {}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False, encoding="utf-8") as f:
            json.dump({**cached, topic: data}, f)
        os.replace(f.name, path)
    except OSError:
        pass
    return data


def torch_version() -> str:
    from grader.provenance import torch_version as installed

    return installed()
