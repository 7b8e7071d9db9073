# expect: gqa_first_group_only
"""A learner's one grouped-query attention decode step."""
import math

import torch


def gqa_decode_step(q, k_cache, v_cache):
    B, H, L, d = q.shape
    G = k_cache.shape[1]
    n = H // G
    k = k_cache[:, :1].expand(B, H, -1, d)
    v = v_cache[:, :1].expand(B, H, -1, d)
    scores = q @ k.transpose(-2, -1)
    scores = scores / math.sqrt(d)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v
