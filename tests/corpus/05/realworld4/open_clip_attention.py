# expect: pass
# source: mlfoundations/open_clip @01c3cd5a6adb5a3d70002eb5f395212a39a71e16, src/open_clip/transformer.py (Attention)
# changes: Attention(dim, num_heads, ...) -> MultiHeadAttention(hidden_size, num_heads); the fused in_proj_weight/in_proj_bias
#   (applied with F.linear and chunked into q, k, v) become the contract's w_q, w_k, w_v (nn.Linear with bias, rows in the same
#   order), out_proj -> w_o; the F.scaled_dot_product_attention branch is removed (forbidden here) and the author's manual
#   branch kept; options the contract has no input for are removed with their branches (scaled_cosine/logit_scale,
#   scale_heads/head_scale, attn_mask, proj_drop); attn_drop is fixed at its default 0 and batch_first at its
#   default True (neither is a contract argument).
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(
            self,
            hidden_size: int,
            num_heads: int = 8,
    ):
        super().__init__()
        dim = hidden_size
        assert dim % num_heads == 0, 'dim should be divisible by num_heads'
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.batch_first = True

        self.w_q = nn.Linear(dim, dim)
        self.w_k = nn.Linear(dim, dim)
        self.w_v = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(0.)
        self.w_o = nn.Linear(dim, dim)

    def forward(self, X):
        x = X
        if self.batch_first:
            x = x.transpose(0, 1)

        L, N, C = x.shape
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)
        q = q.reshape(L, N * self.num_heads, -1).transpose(0, 1)
        k = k.reshape(L, N * self.num_heads, -1).transpose(0, 1)
        v = v.reshape(L, N * self.num_heads, -1).transpose(0, 1)

        q = q * self.scale
        attn = torch.bmm(q, k.transpose(-1, -2))
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = torch.bmm(attn, v)

        x = x.transpose(0, 1).reshape(L, N, C)

        if self.batch_first:
            x = x.transpose(0, 1)

        x = self.w_o(x)
        return x
