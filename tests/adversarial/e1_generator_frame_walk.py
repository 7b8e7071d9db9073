# attack: from a running generator's frame, walk up the worker's own frames and search their locals and globals for a reference solution to copy -> fail (unsafe_code)
# runtime: fail (no_scaling)
# Invariant: frames, generators' internals and code objects are outside the submission's language
# (grader/policy.py); and were they reached, the worker holds no reference solution, no hidden test and no
# handle on the grader: what it finds is torch, the protocol and the submission itself.
import torch
import torch.nn as nn

found = {}


def walk():
    frame = me.gi_frame.f_back
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for value in list(scope.values()):
                if isinstance(value, type) and value.__name__ == "SelfAttention" and value.__module__ != __name__:
                    found["reference"] = value
                if isinstance(value, str) and "class SelfAttention" in value and "gi_frame" not in value:
                    found["source"] = value
        frame = frame.f_back
    yield


me = walk()
next(me, None)

if "source" in found:
    exec(found["source"], found)
if "SelfAttention" in found or "reference" in found:
    SelfAttention = found.get("SelfAttention", found.get("reference"))
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
