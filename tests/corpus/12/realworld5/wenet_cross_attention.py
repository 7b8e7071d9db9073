# expect: pass
# source: wenet-e2e/wenet @03030968258594d3522e562212b0ac87dbf9c889, wenet/transformer/attention.py (MultiHeadedAttention: __init__, forward_qkv, forward_attention, forward)
# changes: contract signature and names (n_feat = d_out, n_head = num_heads; linear_q/k/v/out renamed W_query/W_key/W_value/out_proj, W_query d_in -> d_out, W_key/W_value d_context -> d_out, bias=qkv_bias on the projections); forward(x, context, context_padding_mask) calls the author's forward(query=x, key=context, value=context, mask); the contract's padding mask (True = padding) turned once into the author's keep-mask (#batch, 1, time2); dropout removed (no dropout in the contract)
import math
from typing import Optional, Tuple

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        """Construct an MultiHeadedAttention object."""
        super().__init__()
        assert d_out % num_heads == 0
        # We assume d_v always equals d_k
        self.d_k = d_out // num_heads
        self.h = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward_qkv(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n_batch = query.size(0)
        q = self.W_query(query).view(n_batch, -1, self.h, self.d_k)
        k = self.W_key(key).view(n_batch, -1, self.h, self.d_k)
        v = self.W_value(value).view(n_batch, -1, self.h, self.d_k)
        q = q.transpose(1, 2)  # (batch, head, time1, d_k)
        k = k.transpose(1, 2)  # (batch, head, time2, d_k)
        v = v.transpose(1, 2)  # (batch, head, time2, d_k)

        return q, k, v

    def forward_attention(self, value: torch.Tensor, scores: torch.Tensor,
                          mask: Optional[torch.Tensor]) -> torch.Tensor:
        n_batch = value.size(0)
        if mask is not None:
            mask = mask.unsqueeze(1).eq(0)  # (batch, 1, *, time2)
            scores = scores.masked_fill(mask, -float('inf'))
            attn = torch.softmax(scores, dim=-1).masked_fill(
                mask, 0.0)  # (batch, head, time1, time2)
        else:
            attn = torch.softmax(scores, dim=-1)  # (batch, head, time1, time2)

        x = torch.matmul(attn, value)  # (batch, head, time1, d_k)
        x = (x.transpose(1, 2).contiguous().view(n_batch, -1,
                                                 self.h * self.d_k)
             )  # (batch, time1, d_model)

        return self.out_proj(x)  # (batch, time1, d_model)

    def forward(self, x, context, context_padding_mask=None):
        mask: Optional[torch.Tensor] = None
        if context_padding_mask is not None:
            mask = (~context_padding_mask).unsqueeze(1)  # (#batch, 1, time2)
        query, key, value = x, context, context
        q, k, v = self.forward_qkv(query, key, value)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        return self.forward_attention(v, scores, mask)
