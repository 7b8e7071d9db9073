# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(0)
        q = F.linear(x, self.W_query.weight, self.W_query.bias)
        k = F.linear(x, self.W_key.weight, self.W_key.bias)
        v = F.linear(x, self.W_value.weight, self.W_value.bias)
        scores = torch.bmm(q, k.permute(0, 2, 1)).div_(math.sqrt(self.d_out))
        out = torch.bmm(torch.softmax(scores, dim=2), v)
        return out.squeeze(0) if unbatched else out
