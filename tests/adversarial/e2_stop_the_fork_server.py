# attack: SIGSTOP the fork server (a forked worker's parent), then every process it may signal (kill -1), so later grades hang; correct code -> fail (unsafe_code)
# runtime: fail (PermissionError)
# Invariant: a worker signals only itself: seccomp allows kill, tgkill and rt_(tg)sigqueueinfo only with its
# own pid (tkill and pidfd_send_signal never), so the fork server, the grader and other workers keep running
# and later grades are unaffected; the fork server is also not dumpable (no ptrace, no /proc/<pid>/mem).
import math
import os
import signal

import torch

os.kill(os.getppid(), signal.SIGSTOP)
os.kill(-1, signal.SIGSTOP)


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights
