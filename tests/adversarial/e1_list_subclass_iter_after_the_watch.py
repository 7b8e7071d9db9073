# attack: forward returns a list subclass whose __iter__ runs the forbidden multi_head_attention_forward after the call -> fail (runtime_error)
# Invariant: a call's outputs are taken, by exact type, inside the forbidden-API watch (found by the eighth session's red team).
import math
import torch
import torch.nn as nn
def mha(q, k, v):
    E = q.shape[-1]
    eye = torch.eye(E, dtype=q.dtype, device=q.device)
    zb = torch.zeros(3 * E, dtype=q.dtype, device=q.device)
    out, _ = torch.nn.functional.multi_head_attention_forward(q.transpose(0, -2), k.transpose(0, -2), v.transpose(0, -2), E, 1, None, zb, None, None, False, 0.0, eye, None, training=False, need_weights=True, use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye)
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
