# expect: pass
# held-out: correct; Llama repeat_kv style expand(B, nkv, g, T, hd).reshape(B, nh, T, hd), float32 scale constant.
import torch
import torch.nn as nn


def repeat_kv(t, n_rep):
    b, nkv, T, hd = t.shape
    if n_rep == 1:
        return t
    return t[:, :, None, :, :].expand(b, nkv, n_rep, T, hd).reshape(b, nkv * n_rep, T, hd)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        b, T, _ = x.shape
        q = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        n_rep = self.num_heads // self.num_kv_groups
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        scale = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32))
        att = torch.matmul(q, k.transpose(2, 3)) / scale
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        out = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(out)
