# expect: masked_rows_not_zero
# source: harvardnlp/annotated-transformer/the_annotated_transformer.py, attention() with the masks built by
#   Batch (src_mask = (src != pad).unsqueeze(-2); tgt_mask = ... & subsequent_mask(size)) (commit debc9fd)
# license: MIT
# changes: attention(query, key, value, mask=None, dropout=None) -> padded_attention(query, key, value,
#   key_padding_mask=None, causal=False) (contract); the keep-mask is built the author's way: (~key_padding_mask)
#   as (B, 1, 1, S) and, when causal, & subsequent_mask(L) (True = may attend, created on the query's device as
#   the contract's inputs may live elsewhere); dropout argument dropped. attention() body unchanged
#   (note: -1e9 fill, no zeroing of queries with no key; -1e9 also does not fit float16).
# bug-lines: 30, 31
import math

import torch


def subsequent_mask(size, device=None):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape, device=device), diagonal=1).type(
        torch.uint8
    )
    return subsequent_mask == 0


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, S = query.size(0), key.size(-2)
    mask = None
    if key_padding_mask is not None:
        mask = (~key_padding_mask).view(B, 1, 1, S)
    if causal:
        sub = subsequent_mask(query.size(-2), device=query.device)
        mask = sub if mask is None else mask & sub
    out, _ = attention(query, key, value, mask=mask)
    return out
