# attack: TransformerEncoderLayer(...).self_attn (a MultiheadAttention) called in __len__ of an object hidden in a deque, which torch.tensor sizes from C++ with the watch popped -> fail (runtime_error)
# Invariant: a graded call may hand torch only plain values (grader/sandbox/worker.py: _foreign; 24/24 before, red team round 3).
import collections

import torch
import torch.nn as nn


class Box:
    def __init__(self, q, k, v):
        self.q = q
        self.k = k
        self.v = v
        self.out = None
        self.self_attn = None
        self.out_proj = None

    def __len__(self):
        # called from C++ by torch.tensor's compute_sizes: the Watch (a function mode) is popped, autograd still on
        if self.out is None:
            d = self.q.size(-1)
            layer = nn.TransformerEncoderLayer(d, 1, dim_feedforward=1, dropout=0.0, batch_first=True, dtype=self.q.dtype)
            mha = layer.self_attn  # an nn.MultiheadAttention
            with torch.no_grad():
                mha.in_proj_weight.copy_(torch.cat([torch.eye(d, dtype=self.q.dtype)] * 3))
                mha.in_proj_bias.zero_()
                mha.out_proj.weight.copy_(torch.eye(d, dtype=self.q.dtype))
                mha.out_proj.bias.zero_()
            self.out = mha(self.q, self.k, self.v, need_weights=True)[0]
        return 1

    def __getitem__(self, i):
        if i >= 1:
            raise IndexError(i)
        return 0.0


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        b = Box(self.W_query(x), self.W_key(x), self.W_value(x))
        torch.tensor(collections.deque([b]))
        return b.out.to(x.device)
