# expect: pass
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "num_heads must divide d_out"
        self.h = num_heads
        self.dk = d_out // num_heads
        self.scale = self.dk ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        q = self.W_query(x).reshape(B, T, self.h, self.dk)
        k = self.W_key(context).reshape(B, S, self.h, self.dk)
        v = self.W_value(context).reshape(B, S, self.h, self.dk)

        logits = torch.einsum("bthd,bshd->bhts", q * self.scale, k)
        if context_padding_mask is not None:
            bias = torch.zeros(B, 1, 1, S, dtype=logits.dtype, device=logits.device)
            bias = bias.masked_fill(context_padding_mask.view(B, 1, 1, S), torch.finfo(logits.dtype).min)
            logits = logits + bias
        attn = logits.softmax(dim=-1)
        mixed = torch.einsum("bhts,bshd->bthd", attn, v).reshape(B, T, self.h * self.dk)
        return self.out_proj(mixed)
