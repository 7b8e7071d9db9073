# attack: keep a module as a value (M = torch.nn.functional) and walk through it to torch.overrides' table, which hands out scaled_dot_product_attention without naming it -> fail (unsafe_code)
# runtime: fail (forbidden_api)
# Invariant: module objects never become values and every step through a module is on the allowlist
# (grader/policy.py, grader/reachable.py); at run time the worker's watch, built before the submission is
# imported, refuses the fused kernel however it was found.
import torch
import torch.nn as nn

M = torch.nn.functional
table = M.torch.overrides.get_overridable_functions()
sdpa = next(f for f in table[M] if f.__name__ == "scaled" + "_dot_product_attention")


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return sdpa(self.W_query(x), self.W_key(x), self.W_value(x))
