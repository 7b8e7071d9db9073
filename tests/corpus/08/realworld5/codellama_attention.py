# expect: kv_cache_mask_offset
# also: heads_not_divisible
# bug-lines: 16, 31
# source: meta-llama/codellama @077f7332d01650f96ad80c77b099f04a773c0e1e, llama/model.py (Attention.__init__/forward, the causal mask of Transformer.forward)
# changes: contract names W_query/W_key/W_value/out_proj (nn.Linear for the fairscale parallel layers, bias=qkv_bias, out_proj with bias); model parallelism, RoPE and the GQA repeat_kv removed (no contract input: n_kv_heads = n_heads); the preallocated cache_k/cache_v buffers written at start_pos replaced by the contract's caches in and out ((B, nh, P, hs) <-> the author's (B, P, nh, hs) by transpose(1, 2)), start_pos = P; the mask built by Transformer.forward moved into forward, on x.device instead of the module-level device global
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.n_local_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        bsz, seqlen, _ = x.shape
        start_pos = 0 if k_cache is None else k_cache.size(2)

        mask = None
        if seqlen > 1:
            mask = torch.full(
                (1, 1, seqlen, seqlen), float("-inf"), device=x.device
            )
            mask = mask.to(torch.float32).triu(diagonal=start_pos + 1).type_as(x)

        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)

        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_heads, self.head_dim)

        keys, values = xk, xv
        if k_cache is not None:
            keys = torch.cat([k_cache.transpose(1, 2), xk], dim=1)
            values = torch.cat([v_cache.transpose(1, 2), xv], dim=1)

        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.out_proj(output), keys, values
