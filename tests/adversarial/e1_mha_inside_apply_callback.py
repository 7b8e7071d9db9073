# attack: nn.MultiheadAttention (reached as a TransformerEncoderLayer's self_attn, need_weights=True: no fused kernel) called inside a Tensor.apply_ callback, where a torch-function mode's handler has popped the watch -> fail (unsafe_code)
# runtime: fail (runtime_error)
# Invariant: a torch call that runs a Python callable from C++ (apply_, map_, map2_) is refused by the policy and,
# inside a graded call, by the worker's watch (grader/sandbox/worker.py: CALLBACK_RUNNERS); found by the ninth
# session's red team (24/24 on exercise 1 in every tier before).
import torch
import torch.nn as nn


def beneath_the_modes(fn):
    box = []

    def callback(value):
        if not box:
            box.append(fn())
        return value

    torch.zeros(1).apply_(callback)
    return box[0]


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        layer = nn.TransformerEncoderLayer(d_out, 1, dim_feedforward=4, dropout=0.0, bias=False).self_attn
        with torch.no_grad():
            layer.in_proj_weight.copy_(torch.eye(d_out).repeat(3, 1))
            layer.out_proj.weight.copy_(torch.eye(d_out))
        layer.requires_grad_(False)
        self.kept = [layer]  # not a submodule: the grader's weights never reach it

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        layer = self.kept[0].to(dtype=x.dtype)
        if x.dim() == 3:
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        out = beneath_the_modes(lambda: layer(q, k, v, need_weights=True)[0])
        return out.transpose(0, 1) if x.dim() == 3 else out
