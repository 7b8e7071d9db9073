# expect: scale_wrong_dim
# also: runtime_error
# bug-lines: 18, 19
# source: graykode/nlp-tutorial @021b0c03f3db6fd6aaf309cfead0abf5994af5a8, 5-1.Transformer/Transformer.py (ScaledDotProductAttention.forward, module-level d_k)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   the module's forward(Q, K, V, attn_mask) became the contract function (one line maps the contract names to the author's);
#   np.sqrt -> math.sqrt (numpy is not an allowed import); the hyper-parameter `d_k = d_v = 64` set in the script's __main__ moved to module level so the name resolves
import math

import torch
import torch.nn as nn

d_k = d_v = 64  # dimension of K(=Q), V


def scaled_dot_product_attention(query, key, value, mask=None):
    Q, K, V, attn_mask = query, key, value, mask
    scores = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(d_k) # scores : [batch_size x n_heads x len_q(=len_k) x len_k(=len_q)]
    scores.masked_fill_(attn_mask, -1e9) # Fills elements of self tensor with value where mask is one.
    attn = nn.Softmax(dim=-1)(scores)
    context = torch.matmul(attn, V)
    return context, attn
