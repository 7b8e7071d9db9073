# attack: pick scaled_dot_product_attention out of torch.overrides.get_overridable_functions() by its name -> fail (unsafe_code)
# runtime: fail (forbidden_api)
# Invariant: torch.overrides is not a reachable attribute; at run time the fused kernel is refused and
# recorded by the worker's function and dispatch modes.
import torch
import torch.nn as nn

NAME = "scaled" + "_dot_product_attention"
found = [f for fs in torch.overrides.get_overridable_functions().values() for f in fs
         if getattr(f, "__name__", "") == NAME]
sdpa = found[0]


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return sdpa(self.W_query(x), self.W_key(x), self.W_value(x))
