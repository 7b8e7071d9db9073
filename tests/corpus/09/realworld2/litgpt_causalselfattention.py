# expect: pass
# source: Lightning-AI/litgpt/litgpt/model.py, CausalSelfAttention.forward and .scaled_dot_product_attention, with the
#         checks of litgpt/config.py Config.__post_init__ (https://github.com/Lightning-AI/litgpt/blob/26857050fe3ff627cd714fe92f5838f51a3d5efa/litgpt/model.py)
# license: Apache-2.0
# changes: constructor (config, block_idx) -> the contract's (d_in, d_out, context_length, num_heads, num_kv_groups,
#          qkv_bias=False) with n_embd = d_out, n_head = num_heads, n_query_groups = num_kv_groups, head_size =
#          n_embd // n_head and Config's two asserts; the fused qkv projection, laid out [q | k | v] and split with
#          qkv.split((query_size, key_size, value_size)), becomes the contract's W_query/W_key/W_value (d_in inputs,
#          bias=qkv_bias) and proj becomes out_proj (with bias). Rotary (cos/sin), qk-norm, the KV cache
#          (input_pos is None) and sliding windows are removed. torch's fused SDPA function is not allowed in this
#          exercise: the author's own manual branch of scaled_dot_product_attention (the soft-capping one, without
#          the capping; mscale = 1, attention_scores_scalar unset) is used instead.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        head_size = d_out // num_heads
        assert num_heads % num_kv_groups == 0
        self.W_query = nn.Linear(d_in, num_heads * head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * head_size, bias=qkv_bias)
        self.out_proj = nn.Linear(head_size * num_heads, d_out)
        self.head_size = head_size
        self.n_head = num_heads
        self.n_query_groups = num_kv_groups
        self.mscale = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head_size = self.head_size
        n_head = self.n_head
        n_query_groups = self.n_query_groups
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)

        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # 3x(B, T, C*)

        q = q.view(B, T, n_head, head_size)  # (B, T, nh_q, hs)
        k = k.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)
        v = v.view(B, T, n_query_groups, head_size)  # (B, T, n_query_groups, hs)

        q = q.transpose(1, 2)  # (B, nh_q, T, hs)
        k = k.transpose(1, 2)  # (B, nh_k, T, hs)
        v = v.transpose(1, 2)  # (B, nh_v, T, hs)

        if n_query_groups != n_head:
            q_per_kv = n_head // n_query_groups
            k = k.repeat_interleave(q_per_kv, dim=1)  # (B, nh_q, T, hs)
            v = v.repeat_interleave(q_per_kv, dim=1)  # (B, nh_q, T, hs)

        y = self.scaled_dot_product_attention(q, k, v)

        y = y.reshape(B, T, head_size * n_head)

        return self.out_proj(y)  # (B, T, C)

    def scaled_dot_product_attention(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        scale = 1.0 / math.sqrt(self.head_size)
        scale = scale * self.mscale * self.mscale

        scores = q @ k.mT * scale
        if mask is None:
            mask = torch.ones(q.size(2), q.size(2), dtype=q.dtype, device=q.device).triu(diagonal=1)
            mask.masked_fill_(mask.bool(), torch.finfo(q.dtype).min)
        scores = scores + mask
        scores = F.softmax(scores, dim=-1, dtype=torch.float).to(dtype=q.dtype)
        y = scores @ v
        return y.transpose(1, 2)
