# expect: pass
import math

import torch


def _attend_block(q, key, value, q_start, causal, block_size, scale):
    """Online softmax of one block of queries against all keys, one key block at a time."""
    B, H, bq, _ = q.shape
    S = key.size(2)
    running_max = torch.full((B, H, bq, 1), float("-inf"), dtype=q.dtype, device=q.device)
    running_sum = torch.zeros((B, H, bq, 1), dtype=q.dtype, device=q.device)
    running_out = torch.zeros((B, H, bq, value.size(-1)), dtype=q.dtype, device=q.device)
    last_query = q_start + bq - 1
    for k_start in range(0, S, block_size):
        if causal and k_start > last_query:
            break  # this and every later key block is entirely in the future
        k_end = min(k_start + block_size, S)
        scores = torch.matmul(q, key[:, :, k_start:k_end].transpose(-2, -1)) * scale
        if causal and k_end - 1 > q_start:
            # this block crosses the diagonal: compare absolute positions
            q_pos = torch.arange(q_start, q_start + bq, device=q.device).unsqueeze(-1)
            k_pos = torch.arange(k_start, k_end, device=q.device).unsqueeze(0)
            scores = scores.masked_fill(k_pos > q_pos, float("-inf"))
        block_max = scores.amax(dim=-1, keepdim=True)
        new_max = torch.maximum(running_max, block_max)
        correction = torch.exp(running_max - new_max)  # 0 on the first block
        probs = torch.exp(scores - new_max)
        running_sum = running_sum * correction + probs.sum(dim=-1, keepdim=True)
        running_out = running_out * correction + torch.matmul(probs, value[:, :, k_start:k_end])
        running_max = new_max
    return running_out / running_sum


def tiled_attention(query, key, value, causal=False, block_size=64):
    scale = 1.0 / math.sqrt(query.size(-1))
    L = query.size(2)
    pieces = []
    for q_start in range(0, L, block_size):
        q = query[:, :, q_start:q_start + block_size]
        pieces.append(_attend_block(q, key, value, q_start, causal, block_size, scale))
    return torch.cat(pieces, dim=2)
