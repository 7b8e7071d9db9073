# attack: multiply the per-process memory limit by forking: six children each fill 600 MB and keep growing -> fail (unsafe_code)
# runtime: fail (PermissionError)
# Invariant: limits hold per submission, not per process: with cgroup v2 the worker's memory.max and
# pids.max cover all its processes; otherwise seccomp refuses fork and non-thread clone, so the worker is
# one process whose address-space limit bounds the whole submission.
import os
import time

import torch
import torch.nn as nn

for _ in range(6):
    if os.fork() == 0:
        hog = [torch.ones(600 << 20, dtype=torch.uint8)]
        while True:
            hog.append(torch.ones(100 << 20, dtype=torch.uint8))
            time.sleep(0.05)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()

    def forward(self, x):
        return x
