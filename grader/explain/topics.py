"""The explainer topics, in display order, and the module that computes each one's live numbers."""
from __future__ import annotations

from importlib import import_module

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


def live_data(topic: str) -> dict:
    """Torch is imported only here, so listing topics stays fast."""
    module = LIVE[topic]
    data = getattr(import_module(f"grader.explain.{module}"), topic)() if module else {}
    return {"values": data.get("values", {}), "tables": data.get("tables", {}), "maps": data.get("maps", {})}


def torch_version() -> str:
    import torch

    return torch.__version__
