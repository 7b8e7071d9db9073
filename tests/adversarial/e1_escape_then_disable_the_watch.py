# attack: escape the language (a metaclass builds a class whose dataclass field default is object.__getattribute__), then switch the worker's Python-level watch off (DisableTorchFunction, _disable_current_modes) and call scaled_dot_product_attention -> fail (unsafe_code)
# runtime: fail (forbidden_api)
# Invariant: the kernels behind a forbidden API are replaced in the worker before the submission is imported
# (grader/sandbox/worker.py: block_kernels), so switching the Python modes off does not reach the fused kernel
# (red-team rounds 1 to 5 of issue 19 all scored full marks this way).
import dataclasses
import numbers

import torch
import torch.nn as nn

U = "_" * 2


def dn(s):
    return U + s + U


C = numbers.ABCMeta("C", (object,), {dn("annotations"): {dn("getattribute"): object}})
GA = dataclasses.fields(dataclasses.dataclass(C))[0].default


def probe():
    pass


G = GA(probe, dn("globals"))
B = G[dn("builtins")]
if not isinstance(B, dict):
    B = GA(B, dn("dict"))
GET = B["get" + "attr"]
IMP = B[dn("import")]


def lib(path):
    m = IMP(path)
    for part in path.split(".")[1:]:
        m = GET(m, part)
    return m


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
        sdpa = GET(lib("torch.nn.functional"), "scaled_dot_" + "product_attention")
        no_fn_modes = GET(lib("torch._C"), "DisableTorch" + "Function")
        no_dispatch_modes = GET(lib("torch.utils._python_dispatch"), "_disable_current_modes")
        with no_fn_modes():
            with no_dispatch_modes():
                return sdpa(q, k, v)
