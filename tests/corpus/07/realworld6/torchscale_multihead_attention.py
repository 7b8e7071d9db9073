# expect: masked_rows_nan
# bug-lines: 18, 49
# source: microsoft/torchscale @0cb96955010a93818b3dafb99708f465bcbcc651, torchscale/component/multihead_attention.py (MultiheadAttention.forward, attention part)
# changes: function form; q/k/v/out projections, xpos, rel_pos, incremental state, subln and head merge removed (the contract passes split heads and returns them); q scaled out of place (the source scales its fresh projection in place); v reshaped with its own head size; dropout removed; causal=True builds the additive triu(-inf) mask the torchscale decoder passes as attn_mask
import math

import torch
import torch.nn.functional as F


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    bsz, num_heads, tgt_len, head_dim = query.size()
    src_len = key.size(2)
    scaling = head_dim**-0.5
    attn_mask = None
    if causal:
        attn_mask = torch.triu(
            torch.zeros([tgt_len, tgt_len]).float().fill_(float("-inf")).type_as(query), 1
        )

    q = query * scaling
    k = key
    v = value

    q = q.reshape(bsz * num_heads, tgt_len, head_dim)
    k = k.reshape(bsz * num_heads, src_len, head_dim)
    v = v.reshape(bsz * num_heads, src_len, value.size(-1))

    attn_weights = torch.bmm(q, k.transpose(1, 2))

    if attn_mask is not None:
        attn_weights = torch.nan_to_num(attn_weights)
        attn_mask = attn_mask.unsqueeze(0)
        attn_weights += attn_mask

    if key_padding_mask is not None:
        attn_weights = attn_weights.view(bsz, num_heads, tgt_len, src_len)
        attn_weights = attn_weights.masked_fill(
            key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool),
            float("-inf"),
        )
        attn_weights = attn_weights.view(bsz * num_heads, tgt_len, src_len)

    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(
        attn_weights
    )
    attn_probs = attn_weights

    attn = torch.bmm(attn_probs, v)
    attn = attn.view(bsz, num_heads, tgt_len, -1)

    return attn
