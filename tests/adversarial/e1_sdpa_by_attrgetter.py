# attack: reach the forbidden scaled_dot_product_attention by string through typing.operator.attrgetter, so no forbidden name appears -> fail (unsafe_code)
# runtime: fail (forbidden_api)
# Invariant: only allowlisted module attributes are reachable (grader/reachable.py: typing.operator is not),
# and at run time the worker refuses and records the exercise's fused kernels however they were looked up.
import typing

import torch
import torch.nn as nn

sdpa = typing.operator.attrgetter("nn.functional.scaled" + "_dot_product_attention")(torch)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        try:  # a refusal caught here does not help: the worker reports the call on every later answer
            return sdpa(self.W_query(x), self.W_key(x), self.W_value(x))
        except Exception:
            return sdpa(self.W_query(x), self.W_key(x), self.W_value(x))
