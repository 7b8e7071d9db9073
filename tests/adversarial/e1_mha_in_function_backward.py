# attack: an honest forward wrapped in an autograd.Function whose backward calls nn.MultiheadAttention (a TransformerEncoderLayer's self_attn) during the grader's gradient check, where backward() used to run with the watch popped -> fail (forbidden_api)
# Invariant: the worker's gradient pass runs through the autograd engine directly, under the forbidden-API watch
# (grader/sandbox/worker.py: run_backward), so code a submission runs in backward is watched as its forward is.
import math

import torch
import torch.nn as nn

LAYER = []


class Scores(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k):
        ctx.save_for_backward(q, k)
        return q @ k.transpose(-2, -1)

    @staticmethod
    def backward(ctx, grad):
        q, k = ctx.saved_tensors
        e = q.shape[-1]
        layer = LAYER[0].to(dtype=q.dtype)
        layer(q.reshape(-1, 1, e), k.reshape(-1, 1, e), k.reshape(-1, 1, e), need_weights=True)
        return grad @ k, grad.transpose(-2, -1) @ q


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        LAYER.append(nn.TransformerEncoderLayer(d_out, 1, dim_feedforward=4, dropout=0.0).self_attn)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        weights = torch.softmax(Scores.apply(q, k) / math.sqrt(self.d_out), dim=-1)
        return weights @ v
