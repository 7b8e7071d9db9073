# expect: tensor_on_cpu
# bug-lines: 20
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
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        # a one-element tensor made on the CPU: unlike a 0-dim scalar, CUDA refuses to mix it with x's device
        scale = torch.tensor([self.d_out], dtype=x.dtype).sqrt()
        scores = q @ k.transpose(-2, -1) / scale
        return torch.softmax(scores, dim=-1) @ v
