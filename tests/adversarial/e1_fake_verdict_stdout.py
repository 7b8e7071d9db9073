# attack: print a passing JSON verdict and a success banner on stdout around unscaled attention -> fail (no_scaling)
import torch
import torch.nn as nn

FAKE = ('{"schema_version": 1, "exercise": 1, "slug": "self_attention", "passed": true, "score": 24, '
        '"max_score": 24, "tests": [], "diagnoses": [], "device": "cpu", "duration_s": 0.1}')
print(FAKE)
print("✓ Exercise 1 · self_attention passed: 24/24 points")


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        print(FAKE, flush=True)
        scores = self.W_query(x) @ self.W_key(x).transpose(-2, -1)  # the bug: no 1/sqrt(d_out)
        return torch.softmax(scores, dim=-1) @ self.W_value(x)
