# attack: a CPU hog beside honest submissions: eight busy threads and forked children spinning until the wall clock ends -> fail (unsafe_code)
# runtime: fail (timeout)
# Invariant: one submission's CPU use is bounded by the grader, not by the kernel's autogroup: no child
# processes (seccomp; cgroup v2 cpu.max where available), RLIMIT_CPU and the session's wall clock.
import os
import threading

import torch


def spin():
    while True:
        pass


for _ in range(8):
    threading.Thread(target=spin, daemon=True).start()
try:
    for _ in range(4):
        if os.fork() == 0:
            spin()
except OSError:
    pass


def scaled_dot_product_attention(query, key, value, mask=None):
    spin()
