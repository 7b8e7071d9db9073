# expect: masked_rows_not_zero
# bug-lines: 45, 61
# source: mosaicml/llm-foundry @00ef82a3f8fc6cd4b05f1830bda4b22e3d4f6a40, llmfoundry/models/layers/attention.py
#   (scaled_multihead_dot_product_attention, the attn_impl='torch' path of MPT)
# changes: padded_attention(query, key, value, key_padding_mask=None, causal=False) is a boundary wrapper: the contract's
#   (B, H, L|S, d) tensors are laid out as the author's (b, s, h*d) and the (b, s, h*d) result back as (B, H, L, d); the
#   author's key_padding_mask is True = keep (it masks ~key_padding_mask), so the contract's True = padding mask is
#   inverted once. Inside the author's function: einops rearrange written as view + permute (einops not allowed);
#   parts the contract has no input for are removed (past_key_value, attn_bias, softmax_scale override, dropout,
#   needs_weights, the deprecated multiquery/kv_n_heads=None branches with their warnings.warn: warnings is not allowed).
import math
from typing import Optional

import torch


def scaled_multihead_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    n_heads: int,
    kv_n_heads: Optional[int] = None,
    key_padding_mask: Optional[torch.Tensor] = None,
    is_causal: bool = False,
):

    b_, s_q_, _ = query.shape
    s_k_ = key.shape[1]
    q = query.view(b_, s_q_, n_heads, -1).permute(0, 2, 1, 3)
    k = key.view(b_, s_k_, kv_n_heads, -1).permute(0, 2, 3, 1)
    v = value.view(b_, s_k_, kv_n_heads, -1).permute(0, 2, 1, 3)

    b, _, s_q, d = q.shape
    s_k = k.size(-1)

    # grouped query case
    if kv_n_heads > 1 and kv_n_heads < n_heads:
        k = k.repeat_interleave(n_heads // kv_n_heads, dim=1)
        v = v.repeat_interleave(n_heads // kv_n_heads, dim=1)

    softmax_scale = 1 / math.sqrt(d)

    attn_weight = q.matmul(k) * softmax_scale

    min_val = torch.finfo(q.dtype).min

    if key_padding_mask is not None:
        attn_weight = attn_weight.masked_fill(
            ~key_padding_mask.view((b, 1, 1, s_k)), min_val)

    if is_causal and (not q.size(2) == 1):
        s = max(s_q, s_k)
        causal_mask = attn_weight.new_ones(s, s, dtype=torch.float32)
        causal_mask = causal_mask.tril()
        causal_mask = causal_mask.to(torch.bool)
        causal_mask = ~causal_mask
        causal_mask = causal_mask[-s_q:, -s_k:]
        attn_weight = attn_weight.masked_fill(causal_mask.view(1, 1, s_q, s_k),
                                              min_val)

    attn_weight = torch.softmax(attn_weight, dim=-1)

    out = attn_weight.to(v.dtype).matmul(v)
    out = out.permute(0, 2, 1, 3).reshape(b, s_q, -1)

    return out, None, None


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # boundary: (B, H, L, d) -> the author's (b, s, h*d); True = padding -> the author's True = keep
    B, H, L, _ = query.shape
    S = key.shape[2]
    q = query.transpose(1, 2).reshape(B, L, -1)
    k = key.transpose(1, 2).reshape(B, S, -1)
    v = value.transpose(1, 2).reshape(B, S, -1)
    keep = ~key_padding_mask if key_padding_mask is not None else None
    out, _, _ = scaled_multihead_dot_product_attention(q, k, v, n_heads=H, kv_n_heads=H,
                                                       key_padding_mask=keep, is_causal=causal)
    return out.view(B, L, H, -1).transpose(1, 2)
