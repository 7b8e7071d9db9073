# expect: pass
# source: harvardnlp/annotated-transformer/the_annotated_transformer.py, attention() + class MultiHeadedAttention,
#   used as the decoder's src_attn(x, memory, memory, src_mask) (commit debc9fd)
# license: MIT
# changes: MultiHeadedAttention(h, d_model, dropout=0.1) -> CrossAttention(d_in, d_context, d_out, num_heads,
#   qkv_bias) (contract signature; no dropout in the contract, so p=0.0); self.linears (4 x Linear(d_model, d_model))
#   -> W_query (d_in->d_out), W_key/W_value (d_context->d_out, the contract lets context width differ), out_proj;
#   forward(query, key, value, mask) -> forward(x, context, context_padding_mask) with key = value = context; the
#   author's src_mask is (src != pad).unsqueeze(-2), True = keep, so it is built as
#   (~context_padding_mask).unsqueeze(-2). attention() unchanged.
import math

import torch
import torch.nn as nn


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


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        "Take in model size and number of heads."
        super(CrossAttention, self).__init__()
        assert d_out % num_heads == 0
        # We assume d_v always equals d_k
        self.d_k = d_out // num_heads
        self.h = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(p=0.0)

    def forward(self, x, context, context_padding_mask=None):
        "Implements Figure 2"
        query, key, value = x, context, context
        mask = None
        if context_padding_mask is not None:
            mask = (~context_padding_mask).unsqueeze(-2)
        if mask is not None:
            # Same mask applied to all h heads.
            mask = mask.unsqueeze(1)
        nbatches = query.size(0)

        # 1) Do all the linear projections in batch from d_model => h x d_k
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip((self.W_query, self.W_key, self.W_value), (query, key, value))
        ]

        # 2) Apply attention on all the projected vectors in batch.
        x, _ = attention(query, key, value, mask=mask, dropout=self.dropout)

        # 3) "Concat" using a view and apply a final linear.
        x = (
            x.transpose(1, 2)
            .contiguous()
            .view(nbatches, -1, self.h * self.d_k)
        )
        return self.out_proj(x)
