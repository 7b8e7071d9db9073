# expect: pass
# source: phlippe/uvadlc_notebooks, docs/tutorial_notebooks/tutorial6/Transformers_and_MHAttention.ipynb,
#   def scaled_dot_product (UvA Deep Learning tutorial 6; copied verbatim into many repositories)
# license: MIT
# changes: renamed scaled_dot_product -> scaled_dot_product_attention (contract name) and its parameters q, k, v ->
#   query, key, value (contract parameter names; fixed after the first grading: I had missed this); the author's mask means
#   1 = may attend (masked_fill(mask == 0, -9e15)), the contract's True = blocked, so the condition is `mask`.
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    q, k, v = query, key, value
    d_k = q.size()[-1]
    attn_logits = torch.matmul(q, k.transpose(-2, -1))
    attn_logits = attn_logits / math.sqrt(d_k)
    if mask is not None:
        attn_logits = attn_logits.masked_fill(mask, -9e15)
    attention = F.softmax(attn_logits, dim=-1)
    values = torch.matmul(attention, v)
    return values, attention
