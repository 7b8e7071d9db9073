# expect: mask_inverted
# bug-lines: 18
# source: StateOfTheArt-quant/transformerquant @e6f3ae7135aa5cb581c1a675b3c000b92e4188cc, transformerquant/modules/attention/single.py (attention)
# changes: function renamed attention -> scaled_dot_product_attention; the extra `dropout=None` parameter and its
#          `if dropout is not None` branch removed (contract signature is (query, key, value, mask=None))
#!/usr/bin/env python3
# -*- coding: utf-8 -*-

import torch
import torch.nn.functional as F
import math

def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2,-1)) / math.sqrt(d_k)

    if mask is not None:
        scores = scores.masked_fill(mask==0, -1e9)
    
    p_attn = F.softmax(scores, dim=-1)
    
    context = torch.matmul(p_attn, value)
    return context, p_attn
