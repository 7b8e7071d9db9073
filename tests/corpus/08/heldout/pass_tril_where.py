# expect: pass
# held-out: correct; keeps a bool tril buffer (True = may attend), slices rows P:P+T, torch.where with finfo.min, einsum scores.
import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.nh = num_heads
        self.hd = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("allowed", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)),
                             persistent=False)

    def forward(self, x, k_cache=None, v_cache=None):
        b, t, _ = x.shape
        q = self.W_query(x).view(b, t, self.nh, self.hd).transpose(1, 2)
        k_new = self.W_key(x).view(b, t, self.nh, self.hd).transpose(1, 2)
        v_new = self.W_value(x).view(b, t, self.nh, self.hd).transpose(1, 2)
        k = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=-2)
        v = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=-2)
        total = k.size(-2)
        past = total - t
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.hd ** -0.5
        s = torch.where(self.allowed[past:total, :total], s, torch.finfo(s.dtype).min)
        w = s.softmax(-1)
        y = torch.einsum("bhqk,bhkd->bhqd", w, v)
        y = y.transpose(1, 2).contiguous().view(b, t, self.nh * self.hd)
        return self.out_proj(y), k, v
