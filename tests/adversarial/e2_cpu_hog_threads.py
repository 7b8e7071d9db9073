# attack: a CPU hog beside an honest result: busy threads, and forked children spinning while correct code is graded -> fail (unsafe_code)
# runtime: fail (timeout)
# Invariant: one submission's CPU use is bounded by the grader, not by the kernel's autogroup: it cannot
# start processes (seccomp; cgroup v2 cpu.max where available), so what it burns is its own process's
# RLIMIT_CPU and the session's wall clock. Where forking still worked, this file would pass with its
# hogs running beside it; here the fork is refused and the spinning lands in its own budget.
import math
import os
import threading

import torch


def spin():
    while True:
        pass


for _ in range(4):
    threading.Thread(target=spin, daemon=True).start()
try:
    for _ in range(4):
        if os.fork() == 0:
            spin()
    HOGS = True
except OSError:
    HOGS = False


def scaled_dot_product_attention(query, key, value, mask=None):
    if not HOGS:
        spin()
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # True = blocked
    return torch.softmax(scores, dim=-1) @ value
