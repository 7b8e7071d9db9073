# expect: pass
# held-out: correct; scales the queries by d_out ** -0.5 before the matmul and uses torch.matmul with transpose(-1, -2).
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.scale = d_out ** -0.5

    def forward(self, x):
        q = self.W_query(x) * self.scale
        k = self.W_key(x)
        v = self.W_value(x)
        attn = F.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1)
        return torch.matmul(attn, v)
