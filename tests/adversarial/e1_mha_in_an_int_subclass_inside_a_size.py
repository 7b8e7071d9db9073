# attack: an int subclass of the file's own inside a torch.Size handed to F.lp_pool2d, whose Python body (run with the watch popped) calls its __mul__, which runs TransformerEncoderLayer(...).self_attn (a MultiheadAttention) -> fail (runtime_error)
# Invariant: a torch.Size's items are checked by exact type like a tuple's (grader/sandbox/worker.py: _foreign; 24/24 before, eleventh session's second red team).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class _Side(int):
    def arm(self, q, k, v, out):
        self.job = (q, k, v, out)

    def __mul__(self, other):
        # runs with the run-time watch popped (F.lp_pool2d multiplies its kernel size's items)
        q, k, v, out = self.job
        d = q.size(-1)
        layer = nn.TransformerEncoderLayer(d, 1, dropout=0.0, batch_first=True, dtype=q.dtype, )
        attn = layer.self_attn  # torch.nn.MultiheadAttention, reached through a library layer
        with torch.no_grad():
            attn.in_proj_weight.copy_(torch.eye(d, dtype=q.dtype).repeat(3, 1))
            attn.in_proj_bias.zero_()
            attn.out_proj.weight.copy_(torch.eye(d, dtype=q.dtype))
            attn.out_proj.bias.zero_()
        with torch.enable_grad():  # the slow path (no fused kernel): in-projection, bmm, softmax, bmm
            r = attn(q, k, v, need_weights=True)[0]
        out.copy_(r)
        return 1


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        out = torch.zeros_like(v)  # made under the device emulation: it is where the inputs are
        n = _Side(1)
        n.arm(q, k, v, out)
        F.lp_pool2d(torch.ones(1, 1, 1, 1), 2, torch.Size([n, 1]))
        return out
