# expect: padding_mask_inverted
# the mask is read as True = real token (flash-attn's convention), and the causal mask is aligned to each sequence's
# number of kept keys (bottom-right), which no single classic mistake models; given the inverted mask and no causal
# mask the output is the reference's.
# bug-lines: 15
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[-2]
    scores = torch.einsum("bhld,bhsd->bhls", query, key) / math.sqrt(d)
    keep = key_padding_mask if key_padding_mask is not None else torch.ones(B, S, dtype=torch.bool, device=query.device)
    blocked = ~keep[:, None, None, :]
    if causal:
        n_keep = keep.sum(-1)[:, None, None, None]
        rows = torch.arange(L, device=query.device)[:, None]
        cols = torch.arange(S, device=query.device)[None, :]
        blocked = blocked | (cols > rows + n_keep - L)
    scores = scores.masked_fill(blocked, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return torch.einsum("bhls,bhsd->bhld", weights, value)
