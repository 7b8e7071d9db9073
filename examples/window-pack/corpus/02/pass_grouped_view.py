# expect: pass
import math

import torch


def gqa_decode_step(q, k_cache, v_cache):
    B, H, _, d = q.shape
    G, S = k_cache.shape[1], k_cache.shape[2]
    n = H // G
    qg = q.reshape(B, G, n, d)                                   # heads g*n .. g*n+n-1 share group g
    scores = qg @ k_cache.transpose(-2, -1) / math.sqrt(d)       # (B, G, n, S)
    weights = scores.softmax(dim=-1)
    out = weights @ v_cache                                      # (B, G, n, d)
    return out.reshape(B, H, 1, d)
