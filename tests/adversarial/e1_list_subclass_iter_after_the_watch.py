# attack: forward returns a list subclass whose __iter__ runs nn.MultiheadAttention (a TransformerEncoderLayer's self_attn: no forbidden name in the file) after the call -> fail (runtime_error)
# Invariant: a call's outputs are taken, by exact type, inside the forbidden-API watch (found by the eighth session's red team;
# the ninth session forbade multi_head_attention_forward by name, so the attack reaches it through a layer's attribute).
import math
import torch
import torch.nn as nn
def mha(q, k, v):
    E = q.shape[-1]
    layer = nn.TransformerEncoderLayer(E, 1, dim_feedforward=4, dropout=0.0, bias=False).self_attn.to(q.dtype)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.eye(E, dtype=q.dtype).repeat(3, 1))
        layer.out_proj.weight.copy_(torch.eye(E, dtype=q.dtype))
    out, _ = layer(q.transpose(0, -2), k.transpose(0, -2), v.transpose(0, -2), need_weights=True)
    return out.transpose(0, -2)


class Lazy(list):
    def __iter__(self):
        q, k, v = self[0], self[1], self[2]
        yield mha(q, k, v)

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
        return Lazy([q, k, v])
