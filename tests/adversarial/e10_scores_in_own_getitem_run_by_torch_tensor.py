# attack: torch.tensor(h) with h of the file's own class whose __getitem__ computes softmax(QK^T/sqrt(d))V with the whole score matrix while torch has Python dispatch off (the memory probe sees nothing) -> fail (runtime_error)
# Invariant: a torch call given an object of the submission's own class is refused (grader/sandbox/worker.py: _own; 15/15 before).
import math

import torch


class Holder:
    def __init__(self, q, k, v, causal):
        self.q = q
        self.k = k
        self.v = v
        self.causal = causal
        self.calls = 0
        self.out = None

    def __len__(self):
        return 1

    def __getitem__(self, i):
        if i > 0:
            raise IndexError(i)
        self.calls += 1
        if self.calls == 3:  # torch.tensor's element store: the Python dispatch key is excluded here
            self.out = full(self.q, self.k, self.v, self.causal)
        return 0.0


def full(q, k, v, causal):
    if True:
        if True:
            s = q @ k.transpose(-2, -1)  # the WHOLE (B, H, L, S) score matrix
            s = s / math.sqrt(q.shape[-1])
            if causal:
                L, S = s.shape[-2], s.shape[-1]
                s = s.masked_fill(torch.ones(L, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
            return torch.softmax(s, dim=-1) @ v


def tiled_attention(query, key, value, causal=False, block_size=64):
    if query.requires_grad:  # the gradient test: no memory probe there, and torch.tensor's store runs without autograd
        return full(query, key, value, causal)
    h = Holder(query, key, value, causal)
    torch.tensor(h)
    return h.out.to(query.device)
