# expect: pass
# held-out: correct; HF-style additive bias mask.to(dtype) * finfo.min added to the scores, softmax upcast to float32 and cast back.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _shape(self, t, n):
        return t.view(t.size(0), n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        bsz, tgt_len, _ = x.size()
        src_len = context.size(1)
        q = self._shape(self.W_query(x), tgt_len)
        k = self._shape(self.W_key(context), src_len)
        v = self._shape(self.W_value(context), src_len)
        attn = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            bias = context_padding_mask[:, None, None, :].to(attn.dtype) * torch.finfo(attn.dtype).min
            attn = attn + bias
        attn = F.softmax(attn, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(bsz, tgt_len, self.d_out)
        return self.out_proj(out)
