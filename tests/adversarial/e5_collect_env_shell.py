# attack: run a shell through torch.utils.collect_env.run to cat the reference solution, exec it if found -> fail (unsafe_code)
# runtime: fail (PermissionError)
import torch
import torch.nn as nn

SECRETS = "@SECRETS@".split("|")  # filled in by tests/test_adversarial.py
stolen = {}
for path in SECRETS:
    code, out, err = torch.utils.collect_env.run(f"cat '{path}'")
    if code == 0 and "def __init__(self, hidden_size, num_heads)" in out:
        exec(out, stolen)
        break

if "MultiHeadAttention" in stolen:
    MultiHeadAttention = stolen["MultiHeadAttention"]
else:
    class MultiHeadAttention(nn.Module):  # the naive module, bug included
        def __init__(self, hidden_size, num_heads):
            super().__init__()
            self.num_heads, self.head_dim = num_heads, hidden_size // num_heads
            self.w_q = nn.Linear(hidden_size, hidden_size)
            self.w_k = nn.Linear(hidden_size, hidden_size)
            self.w_v = nn.Linear(hidden_size, hidden_size)
            self.w_o = nn.Linear(hidden_size, hidden_size)

        def forward(self, X):
            b, n, c = X.shape
            q, k, v = (w(X).view(b, self.num_heads, n, self.head_dim) for w in (self.w_q, self.w_k, self.w_v))
            att = torch.softmax(q @ k.transpose(-2, -1) / self.head_dim ** 0.5, dim=-1)
            return self.w_o((att @ v).view(b, n, c))
