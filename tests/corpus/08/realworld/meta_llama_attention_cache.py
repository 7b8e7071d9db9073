# expect: pass
# source: meta-llama/llama/llama/model.py, class Attention.forward + the mask built in Transformer.forward
#   (commit 689c7f2)
# license: Llama 2 Community License (LICENSE in the repository)
# changes: Attention(args) -> KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias) (contract;
#   n_kv_heads = n_heads, no model parallelism: Column/RowParallelLinear -> nn.Linear with the contract's names
#   wq/wk/wv/wo -> W_query/W_key/W_value/out_proj, out_proj with bias as the contract's); rotary embedding left out
#   (the contract's module has no positions); the preallocated self.cache_k[:bsz, start_pos:...] writes become a
#   torch.cat of the passed-in cache (contract: cache in and out, (B, heads, P, head_dim); the author's cache is
#   (B, P, heads, head_dim), so it is transposed at the boundary) and start_pos = P; the additive mask that
#   Transformer.forward builds (triu of -inf, hstack with zeros for the cache) is built here from x's device.
import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.n_kv_heads = num_heads
        self.n_local_heads = num_heads
        self.n_local_kv_heads = self.n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = d_out // num_heads
        self.max_seq_len = context_length

        self.W_query = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        bsz, seqlen, _ = x.shape
        start_pos = 0 if k_cache is None else k_cache.shape[2]

        # Transformer.forward: the causal mask for the new tokens, shifted right by the cache
        mask = None
        if seqlen > 1:
            mask = torch.full(
                (seqlen, seqlen), float("-inf"), device=x.device
            )

            mask = torch.triu(mask, diagonal=1)

            mask = torch.hstack([
                torch.zeros((seqlen, start_pos), device=x.device),
                mask
            ]).type_as(x)

        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)

        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        if k_cache is not None:
            keys = torch.cat([k_cache.transpose(1, 2), xk], dim=1)
            values = torch.cat([v_cache.transpose(1, 2), xv], dim=1)
        else:
            keys, values = xk, xv
        new_k_cache, new_v_cache = keys.transpose(1, 2), values.transpose(1, 2)

        # repeat k/v heads if n_kv_heads < n_heads
        keys = repeat_kv(keys, self.n_rep)  # (bs, cache_len + seqlen, n_local_heads, head_dim)
        values = repeat_kv(values, self.n_rep)  # (bs, cache_len + seqlen, n_local_heads, head_dim)

        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        keys = keys.transpose(1, 2) # (bs, n_local_heads, cache_len + seqlen, head_dim)
        values = values.transpose(1, 2) # (bs, n_local_heads, cache_len + seqlen, head_dim)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.out_proj(output), new_k_cache, new_v_cache
