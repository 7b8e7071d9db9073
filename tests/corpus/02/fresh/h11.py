# expect: pass
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    # query: (..., L, d_k)   key: (..., S, d_k)   value: (..., S, d_v)
    d_k = query.size(-1)

    # raw similarity of every query with every key -> (..., L, S)
    raw = torch.matmul(query, key.transpose(-2, -1))
    scaled = raw / math.sqrt(d_k)

    if mask is not None:
        # True means "this query may not look at this key"
        scaled = scaled.masked_fill(mask, float("-inf"))

    # normalise over the keys: each query's weights sum to 1
    attention = torch.softmax(scaled, dim=-1)

    # weighted average of the values -> (..., L, d_v)
    result = torch.matmul(attention, value)
    return result, attention
