# attack: prlimit64 on the grader's pid: one second of CPU and no file descriptors, then the same on the grader's process group; correct code -> fail (unsafe_code)
# runtime: fail (PermissionError)
# Invariant: a worker sets limits, scheduling and priority only on itself: seccomp allows prlimit64,
# sched_set*/get* and setpriority/getpriority only with pid 0 or its own pid (and PRIO_PROCESS), so a
# worker sharing the grader's uid cannot slow, starve or cap the grader, the fork server or a batch's pool.
import math
import os
import resource

import torch

parent = os.getppid()
resource.prlimit(parent, resource.RLIMIT_CPU, (1, 1))
resource.prlimit(parent, resource.RLIMIT_NOFILE, (0, 0))
os.setpriority(os.PRIO_PGRP, os.getpgid(parent), 19)
os.sched_setaffinity(parent, {0})


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
