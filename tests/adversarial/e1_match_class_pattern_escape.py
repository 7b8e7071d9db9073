# attack: a match statement's class pattern looks attributes up by name (case object(__globals__=G)): reach the builtins, import os, read the reference solution and write outside the worker's directory -> fail (unsafe_code)
# runtime: fail (no_scaling)
# Invariant: match statements are outside the submission's language (found by the red-team round of issue 19);
# and with arbitrary code in the worker, no reference is readable and nothing is written outside its directory.
import torch
import torch.nn as nn

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
TARGETS = "@TARGETS@".split("|")


def probe():
    pass


match probe:
    case object(__globals__=G):
        pass
B = G["__buil" + "tins__"]
imp = B["__imp" + "ort__"] if isinstance(B, dict) else None
if imp is None:
    match B:
        case object(__import__=found):
            imp = found
os = imp("os")
stolen = {}
for path in SECRETS:
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        continue
    if "class SelfAttention" in text:
        exec(text, stolen)
        break
for target in TARGETS + ["/tmp/@MARKER@"]:
    try:
        with open(target, "w") as f:
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
