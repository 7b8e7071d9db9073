# expect: scale_wrong_dim
# also: heads_not_divisible
# bug-lines: 11, 13
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.n_heads = num_heads
        self.d_head = d_out // num_heads
        self.scale = d_out ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def heads(self, t):
        return t.unflatten(-1, (self.n_heads, self.d_head)).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        q = self.heads(self.W_query(x))
        k = self.heads(self.W_key(context))
        v = self.heads(self.W_value(context))
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        if context_padding_mask is not None:
            keep = ~context_padding_mask[:, None, None, :]
            scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).flatten(-2)
        return self.out_proj(out)
