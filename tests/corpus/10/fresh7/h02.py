# expect: pass
import math

import torch


def _query_block(q, key, value, q_start, causal, block_size):
    """Online softmax of one block of (already scaled) queries against every key block."""
    n_q = q.size(-2)
    n_keys = key.size(-2)
    if causal:
        n_keys = min(n_keys, q_start + n_q)  # keys after the block's last query never count
    row_max = q.new_full(q.shape[:-1] + (1,), -math.inf)
    denom = q.new_zeros(q.shape[:-1] + (1,))
    numer = q.new_zeros(q.shape[:-1] + (value.size(-1),))
    q_pos = torch.arange(q_start, q_start + n_q, device=q.device).unsqueeze(-1)

    for k_start in range(0, n_keys, block_size):
        k_end = min(k_start + block_size, n_keys)
        scores = torch.matmul(q, key[..., k_start:k_end, :].transpose(-1, -2))
        if causal:
            k_pos = torch.arange(k_start, k_end, device=q.device).unsqueeze(0)
            scores = torch.where(k_pos <= q_pos, scores, torch.full_like(scores, -math.inf))
        blk_max = scores.max(dim=-1, keepdim=True).values
        new_max = torch.max(row_max, blk_max)
        rescale = torch.exp(row_max - new_max)
        probs = torch.exp(scores - new_max)
        denom = denom * rescale + probs.sum(dim=-1, keepdim=True)
        numer = numer * rescale + torch.matmul(probs, value[..., k_start:k_end, :])
        row_max = new_max
    return numer / denom


def tiled_attention(query, key, value, causal=False, block_size=64):
    B, H, L, d_k = query.shape
    out = query.new_empty(B, H, L, value.size(-1))
    q_scaled = query * (d_k ** -0.5)
    for q_start in range(0, L, block_size):
        q_end = min(q_start + block_size, L)
        out[:, :, q_start:q_end] = _query_block(q_scaled[:, :, q_start:q_end], key, value, q_start, causal, block_size)
    return out
