# expect: heads_not_divisible
# source: pytorch-labs/gpt-fast/model.py, class Attention and ModelArgs.__post_init__ (https://github.com/pytorch-labs/gpt-fast/blob/32971d3129541c5bfb4f715abc33d1c5f408d204/model.py)
# license: BSD-3-Clause (Copyright 2023 Meta)
# changes: class renamed GroupedQueryAttention; constructor (config: ModelArgs) -> the contract's
#          (d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False) with dim = d_out,
#          n_head = num_heads, n_local_heads = num_kv_groups, head_dim = dim // n_head (ModelArgs.__post_init__);
#          the fused wqkv (and its load_hook that concatenates wq/wk/wv) becomes the contract's W_query/W_key/W_value
#          (d_in inputs, bias=qkv_bias), wo becomes out_proj (with bias). Rotary embeddings and the KV cache
#          (kv_cache is None outside generation) are removed; the causal mask gpt-fast builds in
#          Transformer.setup_caches (tril of ones, bool) is registered here and sliced to T. The
#          fused SDPA call (q, k, v, attn_mask=mask, dropout_p=0.0) is not allowed in this exercise and
#          is replaced by the computation it documents (scores * 1/sqrt(head_dim), masked_fill(~mask, -inf),
#          softmax, @ v). The GQA expansion (repeat_interleave on dim 1) is the author's.
# bug-lines: 24
import math
from torch import Tensor
import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0

        head_dim = d_out // num_heads
        # key, query, value projections for all heads
        self.W_query = nn.Linear(d_in, num_heads * head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.kv_cache = None

        self.n_head = num_heads
        self.head_dim = head_dim
        self.n_local_heads = num_kv_groups
        self.dim = d_out
        self.register_buffer("causal_mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        bsz, seqlen, _ = x.shape
        mask = self.causal_mask[None, None, :seqlen, :seqlen]

        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)

        q = q.view(bsz, seqlen, self.n_head, self.head_dim)
        k = k.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        v = v.view(bsz, seqlen, self.n_local_heads, self.head_dim)

        q, k, v = map(lambda x: x.transpose(1, 2), (q, k, v))

        k = k.repeat_interleave(self.n_head // self.n_local_heads, dim=1)
        v = v.repeat_interleave(self.n_head // self.n_local_heads, dim=1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
        att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = att @ v

        y = y.transpose(1, 2).contiguous().view(bsz, seqlen, self.dim)

        y = self.out_proj(y)
        return y
