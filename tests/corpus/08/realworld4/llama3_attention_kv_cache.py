# expect: heads_not_divisible
# bug-lines: 44
# source: meta-llama/llama3 @0a3d7172e92f0bb293c297634a8ae0cb320c8d52, llama/model.py (Attention, repeat_kv, and the mask built in
#   Transformer.forward)
# changes: Attention(args) -> KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias=False) with dim = d_in for the
#   inputs, n_heads = num_heads, n_kv_heads = None (-> n_heads), model-parallel size 1, head_dim = d_out // num_heads,
#   max_seq_len = context_length; fairscale Column/RowParallelLinear wq/wk/wv/wo -> nn.Linear W_query/W_key/W_value/out_proj
#   (bias=qkv_bias; out_proj with bias, to d_out: the contract's layers); rotary embeddings removed (no positions input).
#   Boundary glue for the cache: the author keeps cache_k/cache_v (max_batch, max_seq_len, kv heads, head_dim) on the
#   module and takes start_pos; here start_pos = P = k_cache.size(2), the buffers are allocated per call on x's device
#   and dtype (the author allocates them with .cuda() and casts them with .to(xq)) and filled with the contract's cache in
#   the author's layout, and positions 0..P+T-1 are returned transposed back. The mask of Transformer.forward (seqlen > 1)
#   is built here from the same lines.
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
    """Multi-head attention module."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        n_kv_heads = None
        self.n_kv_heads = num_heads if n_kv_heads is None else n_kv_heads
        model_parallel_size = 1
        self.n_local_heads = num_heads // model_parallel_size
        self.n_local_kv_heads = self.n_kv_heads // model_parallel_size
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = d_out // num_heads
        self.max_seq_len = context_length

        self.W_query = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        bsz, seqlen, _ = x.shape

        # boundary: start_pos and the author's cache buffers, from the contract's cache
        start_pos = 0 if k_cache is None else k_cache.size(2)
        self.cache_k = torch.zeros((bsz, self.max_seq_len, self.n_local_kv_heads, self.head_dim), dtype=x.dtype, device=x.device)
        self.cache_v = torch.zeros((bsz, self.max_seq_len, self.n_local_kv_heads, self.head_dim), dtype=x.dtype, device=x.device)
        if k_cache is not None:
            self.cache_k[:, :start_pos] = k_cache.transpose(1, 2)
            self.cache_v[:, :start_pos] = v_cache.transpose(1, 2)

        # the mask of Transformer.forward
        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device)

            mask = torch.triu(mask, diagonal=1)

            # When performing key-value caching, we compute the attention scores
            # only for the new sequence. Thus, the matrix of scores is of size
            # (seqlen, cache_len + seqlen), and the only masked entries are (i, j) for
            # j > cache_len + i, since row i corresponds to token cache_len + i.
            mask = torch.hstack(
                [torch.zeros((seqlen, start_pos), device=x.device), mask]
            ).type_as(x)

        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)

        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        self.cache_k = self.cache_k.to(xq)
        self.cache_v = self.cache_v.to(xq)

        self.cache_k[:bsz, start_pos : start_pos + seqlen] = xk
        self.cache_v[:bsz, start_pos : start_pos + seqlen] = xv

        keys = self.cache_k[:bsz, : start_pos + seqlen]
        values = self.cache_v[:bsz, : start_pos + seqlen]

        # repeat k/v heads if n_kv_heads < n_heads
        keys = repeat_kv(
            keys, self.n_rep
        )  # (bs, cache_len + seqlen, n_local_heads, head_dim)
        values = repeat_kv(
            values, self.n_rep
        )  # (bs, cache_len + seqlen, n_local_heads, head_dim)

        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        keys = keys.transpose(1, 2)  # (bs, n_local_heads, cache_len + seqlen, head_dim)
        values = values.transpose(
            1, 2
        )  # (bs, n_local_heads, cache_len + seqlen, head_dim)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        # boundary: the cache of positions 0..P+T-1 in the contract's layout
        return self.out_proj(output), keys, values
