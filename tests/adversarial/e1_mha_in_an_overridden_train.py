# attack: nn.MultiheadAttention (a TransformerEncoderLayer's self_attn, need_weights=True) run in an overridden Module.train(), which the worker calls before the forward's watch, on the inputs of earlier calls -> fail (forbidden_api)
# Invariant: the submission's code a graded call runs before its forward (__init__, the Module methods it overrides:
# train, to, named_parameters) runs under the forbidden-API watch too (grader/sandbox/worker.py: guarded).
import math
import torch
import torch.nn as nn

SEEN = []


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.answers = []

    def train(self, mode=True):
        super().train(mode)
        att = nn.TransformerEncoderLayer(self.W_query.out_features, 1, dim_feedforward=4, dropout=0.0).self_attn
        for x in SEEN:  # inputs of earlier calls: answered here, before the forward's watch
            xs = x if x.dim() == 3 else x.unsqueeze(0)
            self.answers.append(att(xs.float(), xs.float(), xs.float(), need_weights=True)[0])
        return self

    def forward(self, x):
        SEEN.append(x.detach().clone())
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        return torch.softmax(s, dim=-1) @ v
