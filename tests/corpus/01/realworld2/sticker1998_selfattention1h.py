# expect: runtime_error
# source: STICKER1998/AI-in-Finance/notebooks/Topic1.md, section "1. Self - Attention", class SelfAttention1H (https://github.com/STICKER1998/AI-in-Finance/blob/0c90aeedfe453ea61c6122539b417e7b554afa2d/notebooks/Topic1.md)
# license: MIT (Copyright (c) 2024, Zifeng Tang)
# changes: class renamed SelfAttention1H -> SelfAttention; constructor (d_model, d_key, d_value) -> the contract's
#          (d_in, d_out, qkv_bias=False) with d_key = d_value = d_out; W_Q/W_K/W_V renamed W_query/W_key/W_value and
#          given bias=qkv_bias (was bias=False); imports added. The einsum equations are the author's.
# bug-lines: 46
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        """
        Initialize the self-attention module.

        Parameters:
        - d_model (int): Dimensionality of the input feature space.
        - d_key (int): Dimensionality of the key and query vectors. 
        - d_value (int): Dimensionality of the value vectors.
        """
        super(SelfAttention, self).__init__()
        self.d_model = d_in
        self.d_key = d_out
        self.d_value = d_out

        # Linear transformations for query, key, and value vectors
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)

    def forward(self, x):
        """
        Parameters:
        - x (Tensor): Input tensor of shape (Batch_size, Sequence_length, d_model).
        Returns:
        - out (Tensor): Output tensor of shape (Batch_size, Sequence_length, d_value).
        """
        
        # Generate query, key, and value tensor
        queries = self.W_query(x)  # Shape: (Batch_size, Sequence_length, d_key)
        keys = self.W_key(x)       # Shape: (Batch_size, Sequence_length, d_key)
        values = self.W_value(x)   # Shape: (Batch_size, Sequence_length, d_value)

        # Calculate attention scores
        score = torch.einsum("bqd, bkd->bqk", [queries, keys])  # Shape: (Batch_size, Sequence_length, Sequence_length)

        # Apply softmax to normalize the scores
        attention = torch.softmax(score / (self.d_key ** 0.5), dim=-1)

        # Weighted sum of values based on the attention scores
        out = torch.einsum("bqk, bkd->bqd", [attention, values])  # Shape: (Batch_size, Sequence_length, d_value)

        return out
