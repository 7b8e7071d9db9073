# expect: pass
# source: lucidrains/perceiver-pytorch @111523c7ba03b66749132bf956f26ec1c5c42855, perceiver_pytorch/perceiver_pytorch.py (Attention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   Attention(query_dim, context_dim, heads, dim_head, dropout) -> CrossAttention(d_in, d_context, d_out, num_heads, qkv_bias) with dim_head =
#   d_out // num_heads (plus the contract's divisibility check, since that division is the adapter's); to_q -> W_query, to_kv (one Linear) ->
#   W_key/W_value (its two halves), to_out -> out_proj (+ dropout 0); einops -> reshape/permute; the mask passed as ~context_padding_mask
import torch
from torch import nn, einsum
import torch.nn.functional as F

# helpers

def exists(val):
    return val is not None

def default(val, d):
    return val if exists(val) else d

class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        # adapter: the author takes heads and dim_head separately; the contract gives d_out and num_heads
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        query_dim, context_dim, heads, dim_head, dropout = d_in, d_context, num_heads, d_out // num_heads, 0.
        inner_dim = dim_head * heads
        context_dim = default(context_dim, query_dim)

        self.scale = dim_head ** -0.5
        self.heads = heads

        self.W_query = nn.Linear(query_dim, inner_dim, bias = qkv_bias)
        self.W_key = nn.Linear(context_dim, inner_dim, bias = qkv_bias)
        self.W_value = nn.Linear(context_dim, inner_dim, bias = qkv_bias)

        self.out_proj = nn.Linear(inner_dim, d_out)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x, context = None, context_padding_mask = None):
        # adapter: the author's mask is True = attend (it fills `~mask`); the contract's is True = padding
        mask = None if context_padding_mask is None else ~context_padding_mask
        h = self.heads

        q = self.W_query(x)
        context = default(context, x)
        k, v = self.W_key(context), self.W_value(context)

        # rearrange(t, 'b n (h d) -> (b h) n d', h = h)
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).permute(0, 2, 1, 3).reshape(t.shape[0] * h, t.shape[1], -1), (q, k, v))

        sim = einsum('bid,bjd->bij', q, k) * self.scale

        if exists(mask):
            mask = mask.reshape(mask.shape[0], -1)  # rearrange(mask, 'b ... -> b (...)')
            max_neg_value = -torch.finfo(sim.dtype).max
            mask = mask.repeat_interleave(h, dim = 0)[:, None, :]  # repeat(mask, 'b j -> (b h) () j', h = h)
            sim.masked_fill_(~mask, max_neg_value)

        # attention, what we cannot get enough of
        attn = sim.softmax(dim = -1)

        out = einsum('bij,bjd->bid', attn, v)
        # rearrange(out, '(b h) n d -> b n (h d)', h = h)
        out = out.reshape(-1, h, out.shape[1], out.shape[2]).permute(0, 2, 1, 3).reshape(-1, out.shape[1], h * out.shape[2])
        return self.out_dropout(self.out_proj(out))
