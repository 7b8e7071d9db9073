# expect: heads_not_divisible
# bug-lines: 34
# source: taesiri/MLBites @40c084783343dcadcb95569152482629d64e26c0, db/kv_cache_attention_pytorch/solution.py (CachedMultiheadAttention)
# changes: class renamed KVCacheAttention with the contract's signature (d_in, d_out, context_length, num_heads, qkv_bias);
#          the fused qkv_proj is split into W_query/W_key/W_value (d_in -> d_out, bias=qkv_bias) because the contract
#          names the parameters, and the reshape/permute of the fused output becomes three views; out_proj always has
#          a bias; forward takes k_cache, v_cache separately and returns (out, k, v) instead of (out, (k, v)).
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheAttention(nn.Module):
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        num_heads: int,
        qkv_bias: bool = False,
    ) -> None:
        """Multi-head self-attention with KV caching for autoregressive generation.

        Args:
            d_out: Model dimension E. Must be divisible by num_heads.
            num_heads: Number of attention heads.
            qkv_bias: Whether to use bias in the linear projections.
        """
        super().__init__()
        self.embed_dim = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.scale = self.head_dim**-0.5

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(
        self,
        x: torch.Tensor,
        k_cache: torch.Tensor | None = None,
        v_cache: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T, _ = x.shape
        E = self.embed_dim

        # Compute Q, K, V for new tokens
        q = self.W_query(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)

        # Concatenate with cached K, V if available
        if k_cache is not None:
            cached_k, cached_v = k_cache, v_cache
            k = torch.cat([cached_k, k], dim=2)  # (B, num_heads, S+T, head_dim)
            v = torch.cat([cached_v, v], dim=2)

        # Compute attention scores: Q @ K^T
        scores = q @ k.transpose(-2, -1)  # (B, num_heads, T, S+T)
        scores = scores * self.scale

        # Apply causal mask: each query can only attend to positions <= its position
        # For cached setting: query at position i (0-indexed within T new tokens)
        # corresponds to absolute position S+i, and can attend to positions 0..S+i
        total_len = k.size(2)  # S + T
        cache_len = total_len - T  # S
        query_pos = torch.arange(T, device=x.device).unsqueeze(1) + cache_len  # (T, 1)
        key_pos = torch.arange(total_len, device=x.device).unsqueeze(0)  # (1, S+T)
        causal_mask = key_pos > query_pos  # (T, S+T), True where should mask
        scores = scores.masked_fill(causal_mask.unsqueeze(0).unsqueeze(0), float("-inf"))

        # Softmax and attention
        attn = F.softmax(scores, dim=-1)
        out = attn @ v  # (B, num_heads, T, head_dim)

        # Merge heads and project
        out = out.transpose(1, 2).contiguous().view(B, T, E)
        out = self.out_proj(out)

        return out, k, v
