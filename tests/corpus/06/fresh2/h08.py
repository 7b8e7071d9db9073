# expect: scale_wrong_dim
# also: out_proj_missing
# bug-lines: 23, 37
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        if n_embd % n_head:
            raise ValueError("n_embd must be divisible by n_head")
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_embd, self.n_head, self.flash, self.p = n_embd, n_head, flash, dropout
        self.register_buffer("future", torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), 1))

    def attend(self, q, k, v):
        T = q.shape[-2]
        logits = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(self.n_embd)
        logits = logits.masked_fill(self.future[:T, :T], float("-inf"))
        probs = F.dropout(torch.softmax(logits, dim=-1), p=self.p, training=self.training)
        return torch.einsum("bhij,bhjd->bhid", probs, v)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.n_head, C // self.n_head)).transpose(1, 2) for t in (q, k, v))
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0)
        else:
            y = self.attend(q, k, v)
        # heads side by side again; that is the block's output
        return y.transpose(1, 2).reshape(B, T, C)
