# expect: pass
# held-out: correct; chunk(3, dim=-1), additive float -inf causal bias, F.dropout(training=self.training), flash path with is_causal.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_embd must be divisible by n_head")
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.p = dropout
        self.flash = flash
        bias = torch.triu(torch.full((block_size, block_size), float("-inf")), diagonal=1)
        self.register_buffer("attn_bias", bias, persistent=False)

    def _heads(self, t, B, T):
        return t.view(B, T, self.n_head, -1).transpose(1, 2)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).chunk(3, dim=-1)
        q, k, v = self._heads(q, B, T), self._heads(k, B, T), self._heads(v, B, T)
        if self.flash:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0, is_causal=True)
        else:
            scale = 1.0 / math.sqrt(q.size(-1))
            att = torch.matmul(q, k.transpose(-1, -2)) * scale + self.attn_bias[:T, :T]
            att = F.softmax(att, dim=-1)
            att = F.dropout(att, p=self.p, training=self.training)
            out = torch.matmul(att, v)
        out = out.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(out)
