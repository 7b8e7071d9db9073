# expect: pass
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out=} is not a multiple of {num_heads=}")
        self.h = num_heads
        self.d_head = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.d_head)

    def forward(self, x, context, context_padding_mask=None):
        q = self._split(self.W_query(x))        # (b, t, h, d)
        k = self._split(self.W_key(context))    # (b, s, h, d)
        v = self._split(self.W_value(context))  # (b, s, h, d)

        logits = torch.einsum("bthd,bshd->bhts", q, k) / self.d_head ** 0.5
        if context_padding_mask is not None:
            bias = torch.zeros(context_padding_mask.shape, dtype=logits.dtype, device=logits.device)
            bias = bias.masked_fill(context_padding_mask, float("-inf"))
            logits = logits + bias[:, None, None, :]
        attn = logits.softmax(dim=-1)
        ctx = torch.einsum("bhts,bshd->bthd", attn, v)
        return self.out_proj(ctx.reshape(ctx.shape[0], ctx.shape[1], -1))
