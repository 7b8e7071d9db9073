# expect: runtime_error
# also: heads_not_divisible
# bug-lines: 48
# source: lucidrains/imagen-pytorch @00f4bab5a471f08c814f9ed780ca0c39dee0be20, imagen_pytorch/imagen_pytorch.py (CrossAttention)
# changes: CrossAttention(dim, *, context_dim, dim_head, heads, norm_context) -> CrossAttention(d_in, d_context, d_out,
#   num_heads, qkv_bias=False) with dim = d_in, context_dim = d_context, heads = num_heads, dim_head = d_out // num_heads;
#   to_q -> W_query, the fused to_kv (chunked into k | v) -> W_key, W_value (bias=qkv_bias), to_out's Linear -> out_proj
#   (d_out, with bias, as the contract defines it); parts the contract has no input or parameter for are removed: the
#   input LayerNorm and to_out's LayerNorm, and the learned null key/value for classifier-free guidance with the mask
#   padding that makes room for it (F.pad(mask, (1, 0), value=True)); einops rearrange_many written as view + transpose,
#   rearrange(mask, 'b j -> b 1 1 j') as mask[:, None, None, :] (einops not allowed); the author's mask is True = keep
#   (it fills ~mask), so the contract's True = padding mask is inverted once at the boundary.
import torch
from torch import nn, einsum


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        dim, context_dim, heads, dim_head = d_in, d_context, num_heads, d_out // num_heads
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner_dim = dim_head * heads

        self.W_query = nn.Linear(dim, inner_dim, bias = qkv_bias)
        self.W_key = nn.Linear(context_dim, inner_dim, bias = qkv_bias)
        self.W_value = nn.Linear(context_dim, inner_dim, bias = qkv_bias)

        self.out_proj = nn.Linear(inner_dim, d_out)

    def forward(self, x, context, context_padding_mask = None):
        mask = ~context_padding_mask if context_padding_mask is not None else None  # boundary: True = keep
        b, n, device = *x.shape[:2], x.device

        q, k, v = (self.W_query(x), self.W_key(context), self.W_value(context))

        q, k, v = (t.view(t.shape[0], t.shape[1], self.heads, -1).transpose(1, 2) for t in (q, k, v))

        q = q * self.scale

        sim = einsum('b h i d, b h j d -> b h i j', q, k)
        max_neg_value = -torch.finfo(sim.dtype).max

        if mask is not None:
            mask = mask[:, None, None, :]
            sim = sim.masked_fill(~mask, max_neg_value)

        attn = sim.softmax(dim = -1, dtype = torch.float32)

        out = einsum('b h i j, b h j d -> b h i d', attn, v)
        out = out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)
        return self.out_proj(out)
