# expect: fp16_fill_overflow
# also: masked_rows_not_zero
# bug-lines: 20, 21, 22
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    blocked = torch.zeros(L, S, dtype=torch.bool, device=query.device)  # (L, S), True = may not attend
    if causal:
        assert L == S, "a causal mask needs as many queries as keys"
        blocked = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(diagonal=1)  # (L, S)
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask.view(B, 1, 1, S)  # (L, S) | (B, 1, 1, S) -> (B, 1, L, S)
    att = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, L, S)
    # the most negative number of *this* dtype: -1e9 overflows float16, and -inf turns rows with no key into NaN
    att = att.masked_fill(blocked, -1e9)
    att = torch.softmax(att, dim=-1)  # a row with no key at all comes out uniform here ...
    return att @ value  # (B, H, L, S) x (B, H, S, d_v) -> (B, H, L, d_v)
