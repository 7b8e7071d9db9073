# attack: 'h in x' with h of the file's own numbers.Number class: Tensor.__contains__ runs h.__eq__ with the watch popped, and it calls nn.MultiheadAttention (a TransformerEncoderLayer's self_attn, need_weights=True) -> fail (runtime_error)
# Invariant: a torch call given an object of the submission's own class is refused by the watch (grader/sandbox/worker.py: _own; tenth session's second red team: 24/24 before).
import numbers

import torch
import torch.nn as nn


class Holder(numbers.Number):
    def __init__(self, q, k, v):
        self.q = q
        self.k = k
        self.v = v
        self.out = None

    def __eq__(self, other):
        # runs inside Tensor.__contains__, i.e. inside the worker's Watch handler, with its mode popped
        d = self.q.shape[-1]
        layer = nn.TransformerEncoderLayer(d, 1, 1, 0.0, batch_first=True, bias=False)
        attn = layer.self_attn
        with torch.no_grad():
            attn.in_proj_weight.copy_(torch.eye(d, dtype=self.q.dtype).repeat(3, 1))
            attn.out_proj.weight.copy_(torch.eye(d, dtype=self.q.dtype))
        attn = attn.to(dtype=self.q.dtype)
        self.out = attn(self.q, self.k, self.v)[0]
        return torch.zeros(1, dtype=torch.bool)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        h = Holder(self.W_query(x), self.W_key(x), self.W_value(x))
        found = h in x
        return h.out.to(x.device)
