# expect: scale_wrong_dim
# also: mask_missing
# bug-lines: 18, 20
# source: Charmaineem/Hands-On-LLMs @6371e45cf1b349b4f973d66e1a42a9528e77a2b5, Transformer/layers.py (Attention.forward)
# changes: the author's nn.Module with an empty __init__ becomes the contract's function: Attention.forward(self, q, k, v)
#   -> scaled_dot_product_attention(query, key, value, mask=None) with the body unchanged (q, k, v bound to the arguments);
#   the author has no mask argument, so the contract's mask is accepted and, as in the author's code, never used; the
#   author returns only the output, the contract also wants the weights: the author's own s is returned beside it.
#   The author's print(s) is kept.
import torch
import math
import torch.nn.functional as F


# Scaled Dot Product Attention
def scaled_dot_product_attention(query, key, value, mask=None):
    q, k, v = query, key, value
    d_k = k.dim()
    dot = torch.matmul(q, k.transpose(-2, -1))
    s = F.softmax(dot/math.sqrt(d_k), dim=-1)
    print(s)
    output = torch.matmul(s, v)
    return output, s
