# expect: pass
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.scaling = self.head_dim ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, x, context, context_padding_mask=None):
        bsz, tgt_len, _ = x.size()
        src_len = context.size(1)
        query_states = self._shape(self.W_query(x) * self.scaling, tgt_len, bsz)
        key_states = self._shape(self.W_key(context), src_len, bsz)
        value_states = self._shape(self.W_value(context), src_len, bsz)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
        if context_padding_mask is not None:
            # additive mask: 0 for real tokens, -inf for padding; broadcast over heads and queries
            additive = torch.zeros(bsz, 1, 1, src_len, dtype=attn_weights.dtype, device=attn_weights.device)
            additive = additive.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
            attn_weights = attn_weights + additive
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)

        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, tgt_len, self.d_out)
        return self.out_proj(attn_output)
