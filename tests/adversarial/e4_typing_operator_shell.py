# attack: reach os through typing.operator.attrgetter("sys.modules") and run a shell that writes markers outside the sandbox -> fail (unsafe_code)
# runtime: fail (api_mismatch)
# Invariant: the string route to os is refused by the policy's attribute allowlist; without the policy,
# a shell cannot even start (seccomp refuses fork and non-thread clone) and the root is read-only.
import typing

import torch.nn as nn

modules = typing.operator.attrgetter("sys.modules")(typing)
for target in "@TARGETS@".split("|"):
    modules["os"].system(f"echo pwned > '{target}'")


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()

    def forward(self, x):
        return x
