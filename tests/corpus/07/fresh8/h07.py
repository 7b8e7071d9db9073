# expect: padding_mask_on_queries
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    bsz, n_heads, tgt_len, head_dim = query.size()
    src_len = key.size(2)
    attn = torch.matmul(query, key.transpose(2, 3)) / math.sqrt(head_dim)

    masks = []
    if causal:
        masks.append(torch.triu(torch.ones(tgt_len, src_len, dtype=torch.bool, device=attn.device), diagonal=1))
    if key_padding_mask is not None:
        masks.append(key_padding_mask.view(bsz, 1, src_len, 1))

    if masks:
        blocked = masks[0]
        for m in masks[1:]:
            blocked = blocked | m
        attn = attn.masked_fill(blocked, torch.finfo(attn.dtype).min)
        attn = torch.softmax(attn, dim=-1).masked_fill(blocked, 0.0)
    else:
        attn = torch.softmax(attn, dim=-1)
    return torch.matmul(attn, value)
