# expect: scale_wrong_dim
# bug-lines: 30
import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupedQueryAttention(nn.Module):
    """Grouped queries broadcast over their shared KV head; the scale is taken from the group, not the head."""

    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"
        self.num_heads, self.num_kv_groups = num_heads, num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("future", torch.ones(context_length, context_length).triu(1).bool(), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        g = self.num_heads // self.num_kv_groups
        q = self.W_query(x).reshape(b, t, self.num_kv_groups, g, self.head_dim)
        k = self.W_key(x).reshape(b, t, self.num_kv_groups, self.head_dim)
        v = self.W_value(x).reshape(b, t, self.num_kv_groups, self.head_dim)
        scores = torch.einsum("bqngd,bknd->bngqk", q, k)
        scores = scores * g ** -0.5
        scores = scores.masked_fill(self.future[:t, :t], float("-inf"))
        weights = F.softmax(scores, dim=-1)
        out = torch.einsum("bngqk,bknd->bqngd", weights, v)
        return self.out_proj(out.reshape(b, t, -1))
