# expect: heads_merge_wrong
# also: dropout_missing
# bug-lines: 39, 56, 71
# source: rkg209/LLM-from-Scratch @185c89cd7971efec789130e698e61ab39b3707a8, ch1_architecture/src/ch1_architecture/model/attention.py (MultiHeadSelfAttention)
# changes: class MultiHeadSelfAttention(d_model, n_heads, max_seq_len) -> MultiHeadAttention(d_in, d_out, context_length,
#          dropout, num_heads, qkv_bias=False); projections w_q/w_k/w_v -> W_query/W_key/W_value = nn.Linear(d_in, d_out,
#          bias=qkv_bias), w_o -> out_proj = nn.Linear(d_out, d_out) (contract names and sizes; d_model becomes d_out);
#          the KV-cache branch of forward and its TYPE_CHECKING import of ch1_architecture.kv_cache removed (a module a
#          submission may not import; the cache is not part of this exercise). The author's code has no dropout.
"""Hand-written causal multi-head self-attention (A2).

`nn.MultiheadAttention` and `F.scaled_dot_product_attention` are banned (CON-5): the
scaled dot product itself — matmul, scale, mask, softmax, matmul — is one of the two or
three things this chapter exists to prove was understood, not called.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int,
                 qkv_bias: bool = False) -> None:
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_model ({d_out}) must be divisible by n_heads ({num_heads})")
        self.d_model = d_out
        self.n_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

        # Built once: causal_mask[i, j] is True where position i may NOT attend to j.
        causal_mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal_mask", causal_mask)

    def _scaled_dot_product(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, seq_offset: int
    ) -> torch.Tensor:
        # q: [B, H, T, Dh], k/v: [B, H, S, Dh] -> [B, H, T, Dh]
        T, S = q.size(2), k.size(2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # [B, H, T, S]
        # Sliced from `seq_offset` so a cached decode step (T=1, S=t+1) asks whether the
        # single query at absolute position `seq_offset` may see each of the S keys —
        # the same mask, no separate cached-path logic.
        mask = self.causal_mask[seq_offset : seq_offset + T, :S]
        scores = scores.masked_fill(mask, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        return torch.matmul(weights, v)  # [B, H, T, Dh]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: [B, T, D] -> [B, T, D]
        B, T, D = x.shape
        H, Dh = self.n_heads, self.head_dim

        q = self.W_query(x).view(B, T, H, Dh).transpose(1, 2)  # [B, H, T, Dh]
        k = self.W_key(x).view(B, T, H, Dh).transpose(1, 2)  # [B, H, T, Dh]
        v = self.W_value(x).view(B, T, H, Dh).transpose(1, 2)  # [B, H, T, Dh]

        seq_offset = 0

        out = self._scaled_dot_product(q, k, v, seq_offset)  # [B, H, T, Dh]
        out = out.transpose(1, 2).contiguous().view(B, T, D)  # [B, T, D]
        return self.out_proj(out)
