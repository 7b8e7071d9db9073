# expect: api_mismatch
# also: scale_wrong_dim
# bug-lines: 34, 35, 36, 47, 48, 49, 51, 52, 53
# source: aladdinpersson/Machine-Learning-Collection @3b8992fe274f31df61464fc127cde9ffb34896e7, ML/Pytorch/more_advanced/transformer_from_scratch/transformer_from_scratch.py (SelfAttention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   SelfAttention(embed_size, heads) -> MultiHeadAttention(hidden_size, num_heads); values/keys/queries/fc_out -> w_v/w_k/w_q/w_o;
#   forward(values, keys, query, mask) -> forward(X) with X, X, X, None
"""
A from scratch implementation of Transformer network,
following the paper Attention is all you need with a
few minor differences. I tried to make it as clear as
possible to understand and also went through the code
on my youtube channel!


"""

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super(MultiHeadAttention, self).__init__()
        embed_size, heads = hidden_size, num_heads
        self.embed_size = embed_size
        self.heads = heads
        self.head_dim = embed_size // heads

        assert (
            self.head_dim * heads == embed_size
        ), "Embedding size needs to be divisible by heads"

        self.w_v = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.w_k = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.w_q = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.w_o = nn.Linear(heads * self.head_dim, embed_size)

    def forward(self, X):
        values, keys, query, mask = X, X, X, None
        # Get number of training examples
        N = query.shape[0]

        value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]

        # Split the embedding into self.heads different pieces
        values = values.reshape(N, value_len, self.heads, self.head_dim)
        keys = keys.reshape(N, key_len, self.heads, self.head_dim)
        query = query.reshape(N, query_len, self.heads, self.head_dim)

        values = self.w_v(values)  # (N, value_len, heads, head_dim)
        keys = self.w_k(keys)  # (N, key_len, heads, head_dim)
        queries = self.w_q(query)  # (N, query_len, heads, heads_dim)

        # Einsum does matrix mult. for query*keys for each training example
        # with every other training example, don't be confused by einsum
        # it's just how I like doing matrix multiplication & bmm

        energy = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
        # queries shape: (N, query_len, heads, heads_dim),
        # keys shape: (N, key_len, heads, heads_dim)
        # energy: (N, heads, query_len, key_len)

        # Mask padded indices so their weights become 0
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))

        # Normalize energy values similarly to seq2seq + attention
        # so that they sum to 1. Also divide by scaling factor for
        # better stability
        attention = torch.softmax(energy / (self.embed_size ** (1 / 2)), dim=3)
        # attention shape: (N, heads, query_len, key_len)

        out = torch.einsum("nhql,nlhd->nqhd", [attention, values]).reshape(
            N, query_len, self.heads * self.head_dim
        )
        # attention shape: (N, heads, query_len, key_len)
        # values shape: (N, value_len, heads, heads_dim)
        # out after matrix multiply: (N, query_len, heads, head_dim), then
        # we reshape and flatten the last two dimensions.

        out = self.w_o(out)
        # Linear layer doesn't modify the shape, final shape will be
        # (N, query_len, embed_size)

        return out
