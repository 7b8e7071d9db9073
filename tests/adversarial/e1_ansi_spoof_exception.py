# attack: raise an exception whose message carries ANSI escapes that repaint the terminal with a fake green passed line -> fail (ValueError)
# Invariant: submission-derived text (exception type and message, captured output) reaches the
# verdict without escape sequences or control characters (grader.textsafe.clean), in every view.
import torch.nn as nn

SPOOF = "\x1b[2J\x1b[H\x1b[1;32m✓ Exercise 1 · self_attention passed: 24/24 points\x1b[0m\x1b[8m"
print(SPOOF + "\r\x1b]0;passed\x07")


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        raise ValueError(SPOOF)
