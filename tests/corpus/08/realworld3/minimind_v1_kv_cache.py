# expect: kv_cache_ignored
# also: kv_cache_mask_offset
# bug-lines: 69
# source: jingyaogong/minimind @02297df3c15871a1678fd5dc2eb5f0f87a35673e, model/model.py (Attention, repeat_kv)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   LMConfig -> contract arguments (n_kv_heads = n_heads, dropout 0); wq/wk/wv/wo -> W_query/W_key/W_value/out_proj (qkv_bias; out_proj with bias);
#   rotary embedding removed (no positions in the contract); the flash branch (F.scaled_dot_product_attention, off by config) removed; the cache
#   the author keeps on the module is loaded from / returned as the contract's (B, nh, P, hd) tensors (transposed from the author's (B, P, nkv, hd))
import math

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
        dim, n_heads, n_kv_heads, max_seq_len, dropout = d_out, num_heads, None, context_length, 0.0
        self.n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        assert n_heads % self.n_kv_heads == 0
        self.n_local_heads = n_heads
        self.n_local_kv_heads = self.n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = dim // n_heads
        self.W_query = nn.Linear(d_in, n_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(n_heads * self.head_dim, dim)
        self.k_cache, self.v_cache = None, None
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.dropout = dropout

        # print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")
        mask = torch.full((1, 1, max_seq_len, max_seq_len), float("-inf"))
        mask = torch.triu(mask, diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x, k_cache=None, v_cache=None):
        # adapter: the author keeps the cache on the module, as (bs, seqlen, n_kv_heads, head_dim);
        # the contract passes it in and out as (B, num_heads, P, head_dim)
        kv_cache = True
        self.k_cache = None if k_cache is None else k_cache.transpose(1, 2)
        self.v_cache = None if v_cache is None else v_cache.transpose(1, 2)

        bsz, seqlen, _ = x.shape

        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)

        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        # 更高效的kv_cache实现
        if kv_cache and self.eval():
            if seqlen == 1 and all(cache is not None for cache in (self.k_cache, self.v_cache)):
                xk = torch.cat((self.k_cache, xk), dim=1)
                xv = torch.cat((self.v_cache, xv), dim=1)
            self.k_cache, self.v_cache = xk, xv

        xk = repeat_kv(xk, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)
        xv = repeat_kv(xv, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)

        xq = xq.transpose(1, 2)
        xk = xk.transpose(1, 2)
        xv = xv.transpose(1, 2)

        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + self.mask[:, :, :seqlen, :seqlen]  # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        scores = self.attn_dropout(scores)
        output = torch.matmul(scores, xv)  # (bs, n_local_heads, seqlen, head_dim)

        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)

        output = self.out_proj(output)
        output = self.resid_dropout(output)
        return output, self.k_cache.transpose(1, 2), self.v_cache.transpose(1, 2)
