# expect: pass
# source: rasbt/LLMs-from-scratch/ch03/02_bonus_efficient-multihead-attention/mha-implementations.ipynb, class MHAEinsum (commit 28c65cdfbc3338e2e040016eea4b7fdf556e4d57)
# license: Apache-2.0
# changes: class renamed MHAEinsum -> MultiHeadAttention. The author's W_query/W_key/W_value are raw
#   nn.Parameter (d_in, d_out) plus bias_q/k/v; the contract loads nn.Linear weights named W_query.weight etc.,
#   so they became nn.Linear(d_in, d_out, bias=qkv_bias) and the einsums read .weight.T and .bias
#   (reset_parameters dropped: nn.Linear initialises itself). All other lines as written.
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, n, _ = x.shape

        # Calculate Q, K, V using einsum, first perform linear transformations
        Q = torch.einsum("bnd,do->bno", x, self.W_query.weight.T)
        K = torch.einsum("bnd,do->bno", x, self.W_key.weight.T)
        V = torch.einsum("bnd,do->bno", x, self.W_value.weight.T)

        # Add biases if they are used
        if self.W_query.bias is not None:
            Q += self.W_query.bias
            K += self.W_key.bias
            V += self.W_value.bias

        # Reshape for multi-head attention
        Q = Q.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        K = K.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        V = V.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

        # Scaled dot-product attention
        scores = torch.einsum("bhnd,bhmd->bhnm", Q, K) / (self.head_dim ** 0.5)

        # Apply mask
        mask = self.mask[:n, :n]
        scores = scores.masked_fill(mask.bool(), -torch.inf)

        # Softmax and dropout
        attn_weights = torch.softmax(scores, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # Aggregate the attended context vectors
        context_vec = torch.einsum("bhnm,bhmd->bhnd", attn_weights, V)

        # Combine heads and project the output
        context_vec = context_vec.transpose(1, 2).reshape(b, n, self.d_out)
        context_vec = self.out_proj(context_vec)

        return context_vec
