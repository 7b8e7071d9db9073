# expect: scale_not_sqrt
# also: output_shape
# bug-lines: 21, 24
import torch
import torch.nn as nn


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
            x = x.unsqueeze(0)  # treat a lone sequence as a batch of one
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = torch.bmm(q, k.transpose(1, 2)) / self.d_out
        att = att.softmax(dim=-1)
        out = torch.bmm(att, v)
        return out
