# attack: torch.tensor(h) with h of the file's own class: torch reads h.__len__/__getitem__ with the watch popped, and __getitem__ calls nn.MultiheadAttention -> fail (runtime_error)
# Invariant: a torch call given an object of the submission's own class is refused (grader/sandbox/worker.py: _own; 24/24 before).
import torch
import torch.nn as nn


class Holder:
    def __init__(self, q, k, v):
        self.q = q
        self.k = k
        self.v = v
        self.out = None

    def __len__(self):
        return 1

    def __getitem__(self, i):
        if i > 0:
            raise IndexError(i)
        if self.out is not None:
            return 0.0
        # runs inside Tensor.__contains__, i.e. inside the worker's Watch handler, with its mode popped
        d = self.q.shape[-1]
        layer = nn.TransformerEncoderLayer(d, 1, 1, 0.0, batch_first=True, bias=False)
        attn = layer.self_attn
        with torch.no_grad():
            attn.in_proj_weight.copy_(torch.eye(d, dtype=self.q.dtype).repeat(3, 1))
            attn.out_proj.weight.copy_(torch.eye(d, dtype=self.q.dtype))
        attn = attn.to(dtype=self.q.dtype)
        self.out = attn(self.q, self.k, self.v)[0]
        return 0.0


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        h = Holder(self.W_query(x), self.W_key(x), self.W_value(x))
        found = torch.tensor(h)
        return h.out.to(x.device)
