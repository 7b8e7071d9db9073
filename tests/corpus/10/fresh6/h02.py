# expect: pass
import math
import torch


def _key_block_scores(q_blk, k_blk, scale, q_start, k_start, causal):
    s = torch.matmul(q_blk, k_blk.transpose(-1, -2)) * scale
    if causal:
        qi = torch.arange(q_start, q_start + q_blk.shape[-2], device=s.device).view(-1, 1)
        kj = torch.arange(k_start, k_start + k_blk.shape[-2], device=s.device).view(1, -1)
        s = s.masked_fill(kj > qi, -math.inf)
    return s


def _one_query_block(q_blk, key, value, scale, q_start, causal, block_size):
    S = key.shape[-2]
    stop = min(S, q_start + q_blk.shape[-2]) if causal else S
    row_max = denom = acc = None
    k_start = 0
    while k_start < stop:
        k_blk = key[..., k_start:k_start + block_size, :]
        v_blk = value[..., k_start:k_start + block_size, :]
        s = _key_block_scores(q_blk, k_blk, scale, q_start, k_start, causal)
        blk_max = s.amax(dim=-1, keepdim=True)
        if row_max is None:
            # first block: key 0 is visible to every query, so blk_max is finite
            row_max = blk_max
            p = torch.exp(s - row_max)
            denom = p.sum(dim=-1, keepdim=True)
            acc = p @ v_blk
        else:
            new_max = torch.maximum(row_max, blk_max)
            alpha = torch.exp(row_max - new_max)
            p = torch.exp(s - new_max)
            denom = alpha * denom + p.sum(dim=-1, keepdim=True)
            acc = alpha * acc + p @ v_blk
            row_max = new_max
        k_start += block_size
    return acc / denom


def tiled_attention(query, key, value, causal=False, block_size=64):
    scale = 1.0 / math.sqrt(query.shape[-1])
    L = query.shape[-2]
    pieces = []
    q_start = 0
    while q_start < L:
        q_blk = query[..., q_start:q_start + block_size, :]
        pieces.append(_one_query_block(q_blk, key, value, scale, q_start, causal, block_size))
        q_start += block_size
    return torch.cat(pieces, dim=-2)
