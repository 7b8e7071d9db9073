# expect: pass
# source: ashtonjur/MachineTranslator @4bb4d8babeff9fb715c310b152a494588551c3e5, ScaledDot.py (ScaledDotProductAttention.forward)
# changes: the nn.Module ScaledDotProductAttention with forward(self, query, key, value, mask=None) turned into the function scaled_dot_product_attention(query, key, value, mask=None); imports added (the file has none); the author's mask convention (0 = blocked) translated once at the entry with mask = ~mask
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    if mask is not None:
        mask = ~mask
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    attn_weights = torch.softmax(scores, dim=-1)
    output = torch.matmul(attn_weights, value)
    return output, attn_weights
