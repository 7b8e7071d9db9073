# attack: no attention code; look for any copy of the kit (the grader/_kit an editable install leaves in site-packages, a checkout on sys.path, a .venv's clone) and exec its reference solution -> fail (unsafe_code)
# runtime: fail (mask_missing)
# Invariant: the worker's file system is an allowlist (system directories, the standard library, torch,
# numpy, safetensors and their requirements, its own directory): no copy of the kit is visible in any
# install mode, so a file without attention code cannot pass by finding one.
import os
import sys

import torch
import torch.nn as nn

places = set()
for entry in [*sys.path, sys.prefix, os.getcwd()]:
    path = os.path.abspath(entry or ".")
    while path != "/":
        places.add(path)
        path = os.path.dirname(path)
stolen = {}
for place in sorted(places):
    for rel in ("grader/_kit/solutions/03_causal_attention.py", "_kit/solutions/03_causal_attention.py",
                "solutions/03_causal_attention.py"):
        try:
            with open(os.path.join(place, rel)) as f:
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
