# expect: pass
# source: nikitakapitan/transformers @54a608f013d188b266c7578ed7ffdfc4aeed1a3d, src/transformers/attention.py (attention)
# changes: function renamed attention -> scaled_dot_product_attention; the extra `dropout=None` parameter and its two-line
#          `if dropout is not None` branch removed (contract signature is (query, key, value, mask=None)); returns
#          (context, p_attn) instead of context alone (contract return value)


import math
import torch


def scaled_dot_product_attention(query, key, value, mask=None):

    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, -1e9)
    p_attn = scores.softmax(dim=-1)
    context = torch.matmul(p_attn, value)
    return context, p_attn
