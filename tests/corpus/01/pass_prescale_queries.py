# expect: pass
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.scale = d_out ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        # scale the queries first: (q / sqrt(d)) . k == (q . k) / sqrt(d)
        q = self.W_query(x) * self.scale
        k = self.W_key(x)
        v = self.W_value(x)
        return F.softmax(q @ k.mT, dim=-1) @ v
