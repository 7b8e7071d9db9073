# expect: mask_inverted
# bug-lines: 17
# source: ssteve13/transformer-encoder-autoencoding @b1c28540a63f07d35fc77f300fa8622777413cbb, attention.py (ScaledDotProductAttention.forward)
# changes: the nn.Module class ScaledDotProductAttention with forward(self, query, key, value, mask=None) turned into the
#          contract's plain function scaled_dot_product_attention(query, key, value, mask=None) (body unchanged)
import torch
import torch.nn as nn
import torch.nn.functional as F
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)

    attention_weights = F.softmax(scores, dim=-1)
    output = torch.matmul(attention_weights, value)

    return output, attention_weights
