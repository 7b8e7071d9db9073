# expect: heads_not_divisible
# source: karpathy/llama2.c/model.py, class Attention and repeat_kv (https://github.com/karpathy/llama2.c/blob/350e04fe35433e6d2941dce5a1f53308f87058eb/model.py)
# license: MIT (Copyright (c) 2023 Andrej)
# changes: class renamed GroupedQueryAttention; constructor (args: ModelArgs) -> the contract's
#          (d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False) with dim = d_out (input width d_in
#          for the projections), n_heads = num_heads, n_kv_heads = num_kv_groups, max_seq_len = context_length,
#          dropout = 0.0 (ModelArgs' default; the contract has no dropout); wq/wk/wv/wo renamed
#          W_query/W_key/W_value/out_proj, bias=qkv_bias for the first three and a bias for out_proj (all were
#          bias=False). The fused-kernel branch is not allowed in this exercise, so self.flash = False and the
#          author's own manual branch (with its registered additive -inf mask) runs. RoPE (freqs_cos/freqs_sin
#          arguments, apply_rotary_emb) is removed: the exercise has no positions.
# bug-lines: 40
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


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

class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        self.n_kv_heads = num_heads if num_kv_groups is None else num_kv_groups
        assert num_heads % self.n_kv_heads == 0
        model_parallel_size = 1
        self.n_local_heads = num_heads // model_parallel_size
        self.n_local_kv_heads = self.n_kv_heads // model_parallel_size
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_out)
        self.attn_dropout = nn.Dropout(0.0)
        self.resid_dropout = nn.Dropout(0.0)
        self.dropout = 0.0

        # use flash attention or a manual implementation?
        self.flash = False
        if not self.flash:
            mask = torch.full((1, 1, context_length, context_length), float("-inf"))
            mask = torch.triu(mask, diagonal=1)
            self.register_buffer("mask", mask)

    def forward(
        self,
        x: torch.Tensor,
    ):
        bsz, seqlen, _ = x.shape

        # QKV
        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        # grouped multiquery attention: expand out keys and values
        xk = repeat_kv(xk, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)
        xv = repeat_kv(xv, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)

        # make heads into a batch dimension
        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        xk = xk.transpose(1, 2)
        xv = xv.transpose(1, 2)

        # manual implementation
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        assert hasattr(self, 'mask')
        scores = scores + self.mask[:, :, :seqlen, :seqlen]   # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        scores = self.attn_dropout(scores)
        output = torch.matmul(scores, xv)  # (bs, n_local_heads, seqlen, head_dim)

        # restore time as batch dimension and concat heads
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)

        # final projection into the residual stream
        output = self.out_proj(output)
        output = self.resid_dropout(output)
        return output
