# expect: heads_split_wrong
# also: scale_not_sqrt
# bug-lines: 26, 27, 29
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hd).transpose(1, 2)
        k = self.W_key(context).view(B, nh, S, hd)
        v = self.W_value(context).view(B, nh, S, hd)

        scores = q @ k.transpose(-2, -1) / hd
        if context_padding_mask is not None:
            scores = scores.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        w = scores.softmax(dim=-1)
        y = (w @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
