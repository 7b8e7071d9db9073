# attack: nn.MultiheadAttention (a TransformerEncoderLayer's self_attn, need_weights=True) called from a tensor hook that a backward() inside forward runs, beneath the torch-function modes -> fail (unsafe_code)
# runtime: fail (runtime_error)
# Invariant: backward() and torch.autograd.grad/backward inside a graded call are refused (the autograd engine
# runs hooks with the watch popped); the worker runs its own gradient pass through the engine directly, so hooks and
# autograd.Function.backward run under its modes (grader/sandbox/worker.py: run_backward). Ninth session's red team.
import torch
import torch.nn as nn


def beneath_the_modes(fn):
    box = []

    def hook(grad):
        box.append(fn())
        return grad

    with torch.enable_grad():
        t = torch.zeros(1, requires_grad=True)
        y = t * 2
        y.register_hook(hook)
        y.sum().backward()
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
        self.kept = [layer]

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        layer = self.kept[0].to(dtype=x.dtype)
        if x.dim() == 3:
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        with torch.enable_grad():
            out = beneath_the_modes(lambda: layer(q, k, v, need_weights=True)[0])
        return out.transpose(0, 1) if x.dim() == 3 else out
