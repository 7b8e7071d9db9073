"""Live numbers for the cost topics: complexity, KV-cache memory, MQA/GQA."""
from __future__ import annotations

import math
from functools import cache

import torch

from grader.numerics import dtype_name

from .live import table

GPT2_SMALL = {"name": "GPT-2 small", "layers": 12, "heads": 12, "head_dim": 64, "tokens": 1024}
SEVEN_B = {"name": "7B", "layers": 32, "heads": 32, "head_dim": 128, "tokens": 4096, "ffn": 11008, "vocab": 32000}


def llama_params(cfg: dict) -> int:
    """Parameter count of a LLaMA-style decoder: attention, gated MLP, two norms per layer, embeddings, head."""
    d = cfg["heads"] * cfg["head_dim"]
    per_layer = 4 * d * d + 3 * d * cfg["ffn"] + 2 * d
    return cfg["layers"] * per_layer + 2 * cfg["vocab"] * d + d


def fmt_bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}" if unit == "GiB" else f"{n / size:.1f} {unit}"
    return f"{n} B"


def cache_bytes(layers: int, kv_heads: int, head_dim: int, tokens: int, dtype: torch.dtype, batch: int = 1) -> int:
    """Size of the whole cache as one tensor: K and V for every layer, kv head, token and feature."""
    return torch.empty(2, batch, layers, kv_heads, tokens, head_dim, dtype=dtype, device="meta").nbytes


@cache
def complexity() -> dict:
    d, heads = 768, 12
    fp32 = torch.empty((), dtype=torch.float32).element_size()
    rows = []
    for t in (512, 1024, 2048, 4096, 8192, 32768):
        attn_macs = 2 * t * t * d
        proj_macs = 4 * t * d * d
        rows.append([f"{t:,}", fmt_bytes(t * t * fp32), fmt_bytes(heads * t * t * fp32),
                     f"{attn_macs / 1e9:,.1f}", f"{proj_macs / 1e9:,.1f}"])
    return {
        "values": {"d": d, "heads": heads, "crossover": 2 * d, "first": rows[0], "last": rows[-1]},
        "tables": {"cost": table(rows)},
    }


@cache
def kv_cache() -> dict:
    rows, totals = [], {}
    plans = [
        (GPT2_SMALL, GPT2_SMALL["heads"], torch.float32),
        (GPT2_SMALL, GPT2_SMALL["heads"], torch.float16),
        (SEVEN_B, SEVEN_B["heads"], torch.float16),
        (SEVEN_B, 8, torch.float16),
        (SEVEN_B, 1, torch.float16),
    ]
    for cfg, kv, dt in plans:
        per_token = cache_bytes(cfg["layers"], kv, cfg["head_dim"], 1, dt)
        total = cache_bytes(cfg["layers"], kv, cfg["head_dim"], cfg["tokens"], dt)
        totals[(cfg["name"], kv, dt)] = total
        rows.append([cfg["name"], cfg["layers"], kv, cfg["head_dim"], f"{cfg['tokens']:,}", dtype_name(dt),
                     fmt_bytes(per_token), fmt_bytes(total)])
    mha = totals[(SEVEN_B["name"], SEVEN_B["heads"], torch.float16)]
    batch = 16
    params = llama_params(SEVEN_B)
    return {
        "values": {
            "gpt2": GPT2_SMALL, "big": SEVEN_B,
            "gpt2_fp16": rows[1][-1], "big_token": rows[2][-2], "big_total": rows[2][-1],
            "gqa_total": rows[3][-1], "mqa_total": rows[4][-1],
            "gqa_saving": f"{mha / totals[(SEVEN_B['name'], 8, torch.float16)]:.0f}",
            "mqa_saving": f"{mha / totals[(SEVEN_B['name'], 1, torch.float16)]:.0f}",
            "batch": batch, "params": f"{params:,}",
            "weights": fmt_bytes(params * torch.empty((), dtype=torch.float16).element_size()),
            "batch_total": fmt_bytes(cache_bytes(SEVEN_B["layers"], SEVEN_B["heads"], SEVEN_B["head_dim"],
                                                 SEVEN_B["tokens"], torch.float16, batch)),
        },
        "tables": {"configs": table(rows)},
    }


@cache
def mqa_gqa() -> dict:
    cfg, d_model = SEVEN_B, SEVEN_B["heads"] * SEVEN_B["head_dim"]
    rows = []
    for name, kv in (("MHA", 32), ("GQA", 8), ("GQA", 4), ("MQA", 1)):
        size = cache_bytes(cfg["layers"], kv, cfg["head_dim"], cfg["tokens"], torch.float16)
        rows.append([name, cfg["heads"], kv, cfg["heads"] // kv, fmt_bytes(size), f"{2 * d_model * kv * cfg['head_dim']:,}"])

    g = torch.Generator().manual_seed(0)
    heads, kv_heads, t, hd = 8, 2, 5, 16
    q = torch.randn(1, heads, t, hd, generator=g)
    k, v = (torch.randn(1, kv_heads, t, hd, generator=g) for _ in range(2))
    group = heads // kv_heads

    def attend(q_, k_, v_):
        return (q_ @ k_.transpose(-2, -1) / math.sqrt(hd)).softmax(-1) @ v_

    shared = attend(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))
    looped = torch.stack([attend(q[:, h], k[:, h // group], v[:, h // group]) for h in range(heads)], dim=1)
    owner = torch.arange(kv_heads).repeat_interleave(group).tolist()
    mapping = "; ".join(
        f"q{min(i for i, o in enumerate(owner) if o == kv)}–q{max(i for i, o in enumerate(owner) if o == kv)} → kv{kv}"
        for kv in range(kv_heads))
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return {
        "values": {
            "heads": heads, "kv_heads": kv_heads, "group": group, "mapping": mapping,
            "loop_diff": f"{(shared - looped).abs().max().item():.1e}",
            "fused_diff": f"{(shared - fused).abs().max().item():.1e}",
            "d_model": d_model, "cfg": cfg,
        },
        "tables": {"schemes": table(rows)},
    }
