# expect: pass
# source: hkproj/pytorch-transformer/model.py, class MultiHeadAttentionBlock (https://github.com/hkproj/pytorch-transformer/blob/3beddd2604bfa5e0fbd53f52361bd887dc027a8c/model.py)
# license: none stated in the repository (no LICENSE file)
# changes: class renamed MultiHeadAttention; constructor (d_model, h, dropout) -> the contract's (hidden_size, num_heads)
#          with the attention dropout fixed at 0.0 (the contract has no dropout); w_q/w_k/w_v/w_o keep their names but
#          lose bias=False (the contract's layers are nn.Linear(hidden_size, hidden_size) with bias);
#          forward(q, k, v, mask) -> forward(X), self-attention with q = k = v = X and mask = None (not causal).
#          The static attention() method and the split/merge are the author's.
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        self.d_model = hidden_size # Embedding vector size
        self.h = num_heads # Number of heads
        # Make sure d_model is divisible by h
        assert hidden_size % num_heads == 0, "d_model is not divisible by h"

        self.d_k = hidden_size // num_heads # Dimension of vector seen by each head
        self.w_q = nn.Linear(hidden_size, hidden_size) # Wq
        self.w_k = nn.Linear(hidden_size, hidden_size) # Wk
        self.w_v = nn.Linear(hidden_size, hidden_size) # Wv
        self.w_o = nn.Linear(hidden_size, hidden_size) # Wo
        self.dropout = nn.Dropout(0.0)

    @staticmethod
    def attention(query, key, value, mask, dropout: nn.Dropout):
        d_k = query.shape[-1]
        # Just apply the formula from the paper
        # (batch, h, seq_len, d_k) --> (batch, h, seq_len, seq_len)
        attention_scores = (query @ key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            # Write a very low value (indicating -inf) to the positions where mask == 0
            attention_scores.masked_fill_(mask == 0, -1e9)
        attention_scores = attention_scores.softmax(dim=-1) # (batch, h, seq_len, seq_len) # Apply softmax
        if dropout is not None:
            attention_scores = dropout(attention_scores)
        # (batch, h, seq_len, seq_len) --> (batch, h, seq_len, d_k)
        # return attention scores which can be used for visualization
        return (attention_scores @ value), attention_scores

    def forward(self, X):
        q = k = v = X
        mask = None
        query = self.w_q(q) # (batch, seq_len, d_model) --> (batch, seq_len, d_model)
        key = self.w_k(k) # (batch, seq_len, d_model) --> (batch, seq_len, d_model)
        value = self.w_v(v) # (batch, seq_len, d_model) --> (batch, seq_len, d_model)

        # (batch, seq_len, d_model) --> (batch, seq_len, h, d_k) --> (batch, h, seq_len, d_k)
        query = query.view(query.shape[0], query.shape[1], self.h, self.d_k).transpose(1, 2)
        key = key.view(key.shape[0], key.shape[1], self.h, self.d_k).transpose(1, 2)
        value = value.view(value.shape[0], value.shape[1], self.h, self.d_k).transpose(1, 2)

        # Calculate attention
        x, self.attention_scores = MultiHeadAttention.attention(query, key, value, mask, self.dropout)
        
        # Combine all the heads together
        # (batch, h, seq_len, d_k) --> (batch, seq_len, h, d_k) --> (batch, seq_len, d_model)
        x = x.transpose(1, 2).contiguous().view(x.shape[0], -1, self.h * self.d_k)

        # Multiply by Wo
        # (batch, seq_len, d_model) --> (batch, seq_len, d_model)  
        return self.w_o(x)
