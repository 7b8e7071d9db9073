# expect: fp16_fill_overflow
# bug-lines: 12
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d = query.shape
    S = key.shape[2]
    att = torch.einsum("bhld,bhsd->bhls", query, key) / math.sqrt(d)
    fill = torch.finfo(torch.float32).min

    no_look = torch.zeros((L, S), dtype=torch.bool, device=query.device)
    if causal:
        no_look = torch.triu(torch.ones_like(no_look), diagonal=1)
    no_look = no_look.expand(B, 1, L, S)
    if key_padding_mask is not None:
        no_look = no_look | key_padding_mask[:, None, None, :]

    att = att.masked_fill(no_look, fill)
    att = att.softmax(dim=-1)
    att = att.masked_fill(no_look, 0.0)
    return torch.einsum("bhls,bhsd->bhld", att, value)
