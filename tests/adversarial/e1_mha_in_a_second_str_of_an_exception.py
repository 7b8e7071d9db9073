# attack: an exception whose __str__ runs MultiheadAttention on every call but the first, so the worker's second str() (its memory check) ran it unwatched -> fail (forbidden_api)
# Invariant: a submission's exception is formatted once, under the watch (grader/sandbox/worker.py: Worker.error; runtime_error with MHA unseen before, red team round 3).
import torch
import torch.nn as nn

SEEN = [0]


class Boom(Exception):
    def __init__(self, x):
        super().__init__("boom")
        self.x = x
        self.self_attn = None

    def __str__(self):
        SEEN[0] += 1
        if SEEN[0] % 2 == 0:
            # the worker's second str(exc) (the "memory" key of Worker.error) is outside guarded()
            d = self.x.size(-1)
            layer = nn.TransformerEncoderLayer(d, 1, dim_feedforward=1, dropout=0.0, batch_first=True, dtype=self.x.dtype)
            layer.self_attn(self.x, self.x, self.x, need_weights=True)
            print("MHA ran unseen in str call", SEEN[0])
        return "boom"


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        raise Boom(self.W_query(x).detach())
