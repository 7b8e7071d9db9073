# expect: pass
# source: tangruofeng/PyTorch @dc81094a2e61dcd8332e7a7b70d98127f11e81aa, utils.py (attention)
# changes: attention renamed scaled_dot_product_attention; dropout argument removed (no contract input); contract mask (True = blocked) inverted once on entry to the author's keep-mask convention (mask==0 blocked)
import math
import torch.nn.functional as F
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    if mask is not None:
        mask = ~mask
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    if mask is not None:
        scores = scores.masked_fill(mask==0,-1e9)
    scores = F.softmax(scores, dim=-1)
    return torch.matmul(scores, value), scores
