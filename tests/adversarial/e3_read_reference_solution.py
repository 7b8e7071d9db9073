# attack: find the kit through grader.__file__ and exec the reference solution (passes only if the read works) -> fail (unsafe_code)
# runtime: fail (mask_missing)
import os
import sys

import torch
import torch.nn as nn

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
kit = os.path.dirname(os.path.dirname(sys.modules["grader"].__file__))
SECRETS += [os.path.join(kit, "solutions", "03_causal_attention.py"),
            os.path.join(kit, "grader", "_kit", "solutions", "03_causal_attention.py")]
stolen = {}
for path in SECRETS:
    try:
        with open(path) as f:
            source = f.read()
    except OSError:
        continue
    if "class CausalAttention" in source:
        exec(source, stolen)
        break

if "CausalAttention" in stolen:
    CausalAttention = stolen["CausalAttention"]
else:
    class CausalAttention(nn.Module):  # what is left: attention without its causal mask
        def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
            super().__init__()
            self.d_out = d_out
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            att = self.W_query(x) @ self.W_key(x).transpose(-2, -1) / self.d_out ** 0.5
            return self.dropout(torch.softmax(att, dim=-1)) @ self.W_value(x)
