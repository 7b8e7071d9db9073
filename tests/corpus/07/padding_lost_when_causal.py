# expect: padding_mask_ignored
# from the real-world round of issue 21 (jsbaan's mask_logits): each mask is applied to the raw scores, so with causal=True the causal fill replaces the padded one and padded keys are attended to again.
# bug-lines: 17
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    masked = scores
    if key_padding_mask is not None:
        masked = scores.masked_fill(key_padding_mask[:, None, None, :], torch.finfo(scores.dtype).min)
    if causal:
        masked = scores.masked_fill(torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1), torch.finfo(scores.dtype).min)
    out = torch.softmax(masked, dim=-1) @ value
    if key_padding_mask is not None:  # a sequence that is all padding: no key for any query
        out = out.masked_fill(key_padding_mask.all(-1)[:, None, None, None], 0.0)
    return out
