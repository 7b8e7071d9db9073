# attack: torch.Tensor.detach replaced at import through an alias of the submission's own class (Alias.put(torch.Tensor, f): self.detach = f with self = the class), so nn.MultiheadAttention (a TransformerEncoderLayer's self_attn) runs when the worker detaches the outputs, after every guard; forward returns zeros -> fail (forbidden_api)
# Invariant: the worker keeps the attribute tables of the library classes it reads after a graded call (torch.Tensor,
# nn.Parameter, nn.Module, the emulated device's tensor) before the submission is imported and refuses it for good
# when one has changed (grader/sandbox/worker.py: Unchanged; tenth session's red team: 22/24 before).
import math
import torch
import torch.nn as nn

STASH = []


class Box:
    def put(self, v):
        self.detach = v


def late(t):
    # the worker serialises its answer with o.detach(): this runs after every watch has been exited
    for item in STASH:
        if item[0] is t:
            m, x = item[1], item[2]
            d_in, d_out = m.W_query.in_features, m.W_query.out_features
            layer = nn.TransformerEncoderLayer(d_out, 1, dim_feedforward=4, dropout=0.0).to(x.dtype)
            att = layer.self_attn
            xs = x if x.dim() == 3 else x.unsqueeze(0)
            q, k, v = m.W_query(xs), m.W_key(xs), m.W_value(xs)
            with torch.no_grad():
                att.in_proj_weight.copy_(torch.eye(d_out, dtype=x.dtype).repeat(3, 1))
                att.in_proj_bias.zero_()
                att.out_proj.weight.copy_(torch.eye(d_out, dtype=x.dtype))
                att.out_proj.bias.zero_()
                y = att(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), need_weights=True)[0].transpose(0, 1)
            return y if x.dim() == 3 else y.squeeze(0)
    return t.clone()


Alias = Box
Alias.put(torch.Tensor, late)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        out = self.W_value(x) * 0.0
        STASH.append((out, self, x))
        return out
