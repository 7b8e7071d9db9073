# expect: pass
# source: harvardnlp/annotated-transformer/the_annotated_transformer.py, attention() + class MultiHeadedAttention (commit debc9fd)
# license: MIT
# changes: MultiHeadedAttention(h, d_model, dropout=0.1) -> MultiHeadAttention(hidden_size, num_heads) (contract
#   signature and order; the contract has no dropout, so p=0.0); self.linears = clones(nn.Linear, 4) -> w_q, w_k,
#   w_v, w_o (contract parameter names; same layers in the same order); forward(query, key, value, mask=None) ->
#   forward(X) with query = key = value = X (self-attention, no mask, as the contract calls it); the self.attn
#   cache and the del statements are left out. attention() is copied unchanged (mask branch never taken).
import math

import torch
import torch.nn as nn


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        "Take in model size and number of heads."
        super(MultiHeadAttention, self).__init__()
        assert hidden_size % num_heads == 0
        # We assume d_v always equals d_k
        self.d_k = hidden_size // num_heads
        self.h = num_heads
        self.w_q = nn.Linear(hidden_size, hidden_size)
        self.w_k = nn.Linear(hidden_size, hidden_size)
        self.w_v = nn.Linear(hidden_size, hidden_size)
        self.w_o = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(p=0.0)

    def forward(self, X):
        "Implements Figure 2"
        query = key = value = X
        nbatches = query.size(0)

        # 1) Do all the linear projections in batch from d_model => h x d_k
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip((self.w_q, self.w_k, self.w_v), (query, key, value))
        ]

        # 2) Apply attention on all the projected vectors in batch.
        x, _ = attention(query, key, value, mask=None, dropout=self.dropout)

        # 3) "Concat" using a view and apply a final linear.
        x = (
            x.transpose(1, 2)
            .contiguous()
            .view(nbatches, -1, self.h * self.d_k)
        )
        return self.w_o(x)
