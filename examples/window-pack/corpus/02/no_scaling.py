# expect: no_scaling
"""A learner's one grouped-query attention decode step."""
import math

import torch


def gqa_decode_step(q, k_cache, v_cache):
    B, H, L, d = q.shape
    G = k_cache.shape[1]
    n = H // G
    k = k_cache.repeat_interleave(n, dim=1)
    v = v_cache.repeat_interleave(n, dim=1)
    scores = q @ k.transpose(-2, -1)
    scores = scores
    weights = torch.softmax(scores, dim=-1)
    return weights @ v
