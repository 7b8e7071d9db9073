# expect: pass
# source: NVIDIA/NeMo @0111fe9bdda1af334d3c9371f6dfaf1b6fe9e8d4, nemo/collections/asr/parts/submodules/multi_head_attention.py (MultiHeadAttention: __init__, forward_qkv, forward_attention, forward)
# changes: constructor and layer names from the contract (linear_q/linear_k/linear_v/linear_out -> W_query/W_key/W_value/out_proj, n_feat split into d_in, d_context and d_out, qkv_bias); dropout removed; forward(x, context, context_padding_mask) calls the source's forward(query=x, key=context, value=context, mask) with the (batch, time1, time2) True=masked mask built from context_padding_mask; np.finfo written as torch.finfo (numpy is not an allowed import); self.attn kept
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        """Construct an MultiHeadedAttention object."""
        super(CrossAttention, self).__init__()
        assert d_out % num_heads == 0
        # We assume d_v always equals d_k
        self.d_k = d_out // num_heads
        self.h = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.attn = None

    def forward_qkv(self, query, key, value):
        n_batch = query.size(0)
        q = self.W_query(query).view(n_batch, -1, self.h, self.d_k)
        k = self.W_key(key).view(n_batch, -1, self.h, self.d_k)
        v = self.W_value(value).view(n_batch, -1, self.h, self.d_k)
        q = q.transpose(1, 2)
        k = k.transpose(1, 2)
        v = v.transpose(1, 2)

        return q, k, v

    def forward_attention(self, value, scores, mask):
        n_batch = value.size(0)
        if mask is not None:
            mask = mask.unsqueeze(1)  # (batch, 1, time1, time2)
            if scores.dtype == torch.float16:
                dtype = torch.float16
            else:
                dtype = torch.float32
            min_value = torch.finfo(dtype).min
            scores = scores.masked_fill(mask, min_value)
            self.attn = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)  # (batch, head, time1, time2)
        else:
            self.attn = torch.softmax(scores, dim=-1)  # (batch, head, time1, time2)

        p_attn = self.attn
        x = torch.matmul(p_attn, value)  # (batch, head, time1, d_k)
        x = x.transpose(1, 2).contiguous().view(n_batch, -1, self.h * self.d_k)  # (batch, time1, d_model)

        return self.out_proj(x)  # (batch, time1, d_model)

    def forward(self, x, context, context_padding_mask=None):
        query, key, value = x, context, context
        mask = None
        if context_padding_mask is not None:
            mask = context_padding_mask.unsqueeze(1).expand(x.size(0), x.size(1), context.size(1))
        q, k, v = self.forward_qkv(query, key, value)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        return self.forward_attention(v, scores, mask)
