# expect: masked_rows_not_zero
# bug-lines: 29
# source: dhlee347/pytorchic-bert @24375eadf1d2014d582f39591efcafbc75b7bbec, models.py (MultiHeadedSelfAttention.forward)
# changes: function padded_attention instead of the module; q/k/v arrive already split into heads (proj_q/k/v, split_last and merge_last removed: no contract input for them); np.sqrt written math.sqrt (numpy is not an allowed import); the author's (B, S) keep-mask (1 = real token) built once from the contract's key_padding_mask (True = padding) and, for causal=True, combined with the causal keep-mask into (B, L, S), so mask[:, None, None, :] becomes mask[:, None, :, :]; attention dropout and self.scores removed; returns the heads before the merge
import math

import torch
import torch.nn.functional as F


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, L, S = query.size(0), query.size(-2), key.size(-2)
    mask = None
    if key_padding_mask is not None or causal:
        mask = torch.ones(B, L, S, dtype=torch.bool, device=query.device)
        if key_padding_mask is not None:
            mask = mask & ~key_padding_mask[:, None, :]
        if causal:
            mask = mask & torch.ones(L, S, dtype=torch.bool, device=query.device).tril()

    q, k, v = query, key, value
    # (B, H, S, W) @ (B, H, W, S) -> (B, H, S, S) -softmax-> (B, H, S, S)
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
    if mask is not None:
        mask = mask[:, None, :, :].float()
        scores -= 10000.0 * (1.0 - mask)
    scores = F.softmax(scores, dim=-1)
    # (B, H, S, S) @ (B, H, S, W) - > (B, H, S, W)
    h = scores @ v
    return h
