# expect: pass
# source: snowch/snowch.github.io @49fc40a0a50e13b54df3dc18a9ac4aa015ed14ee, ai-eng/transformer/TR02_self_attention_from_scratch.md (CausalSelfAttention code cell)
# changes: constructor CausalSelfAttention(d_model, n_heads, dropout=0.0) -> (n_embd, n_head, block_size, dropout=0.0, flash=False) (attributes follow the new names; block_size and flash are accepted and unused); layers qkv/proj renamed c_attn/c_proj with bias (were bias=False); forward's return_weights argument and branch removed
import torch
import torch.nn as nn
import torch.nn.functional as F

class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0, flash: bool = False):
        super().__init__()
        assert n_embd % n_head == 0, "d_model must be divisible by n_heads"
        self.n_embd = n_embd
        self.n_head = n_head
        self.head_dim = n_embd // n_head

        # Produce Q, K, V in one matmul: (B, T, C) -> (B, T, 3C)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)

        # Final projection after concatenating heads
        self.c_proj = nn.Linear(n_embd, n_embd)

        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor):
        B, T, C = x.shape

        qkv = self.c_attn(x)                 # (B, T, 3C)
        q, k, v = qkv.split(C, dim=2)     # each (B, T, C)

        # (B, T, C) -> (B, nh, T, hs)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)

        # Attention logits: (B, nh, T, T)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (self.head_dim ** 0.5))

        # Causal mask (broadcast to B, nh)
        mask = torch.tril(torch.ones(T, T, device=x.device)).view(1, 1, T, T)
        att = att.masked_fill(mask == 0, float("-inf"))

        # Softmax to weights
        w = F.softmax(att, dim=-1)
        w = self.dropout(w)

        # Weighted sum of values: (B, nh, T, hs)
        y = w @ v

        # Recombine heads: (B, T, C)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.c_proj(y)

        return y
