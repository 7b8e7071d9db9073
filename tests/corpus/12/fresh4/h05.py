# expect: padding_mask_inverted
# bug-lines: 32
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        q = self.W_query(x).reshape(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.W_key(context).reshape(B, S, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.W_value(context).reshape(B, S, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            # extended attention mask, as in BERT
            ext = (1.0 - context_padding_mask[:, None, None, :].to(scores.dtype)) * -10000.0
            scores = scores + ext
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, T, self.d_out)
        return self.out_proj(out)
