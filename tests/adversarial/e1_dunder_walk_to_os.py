# attack: walk ().__class__.__base__.__subclasses__() to os.system, write markers outside the sandbox -> fail (unsafe_code)
# runtime: fail (no_scaling)
import torch
import torch.nn as nn

TARGETS = "@TARGETS@".split("|")  # filled in by tests/test_adversarial.py
for klass in ().__class__.__base__.__subclasses__():
    if klass.__name__ == "_wrap_close":
        system = klass.__init__.__globals__["system"]
        for target in TARGETS:
            system(f"echo pwned > '{target}' 2>/dev/null")
        break


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        scores = self.W_query(x) @ self.W_key(x).transpose(-2, -1)
        return torch.softmax(scores, dim=-1) @ self.W_value(x)
