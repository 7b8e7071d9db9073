# expect: qkv_bias_ignored
# also: heads_not_divisible
# bug-lines: 38
# source: labmlai/annotated_deep_learning_paper_implementations @a1b15502454517b1e667aae1511b56182d62ff8a, labml_nn/transformers/mha.py (PrepareForMultiHeadAttention, MultiHeadAttention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   PrepareForMultiHeadAttention.linear flattened into the contract's W_query/W_key/W_value (d_in -> d_out) and its forward kept as a method
#   taking the layer; output -> out_proj; labml Module -> nn.Module, tracker.debug dropped (labml not importable); the contract's causal mask is a
#   buffer in the author's [seq_q, seq_k, batch] keep-mask layout and x is transposed to/from the author's [seq, batch, d] layout
"""
---
title: Multi-Headed Attention
summary: >
  This implements the Multi-Headed Attention used in transformers
  using PyTorch with explainations.
---
"""

import math
from typing import Optional

import torch
from torch import nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        heads, d_model, dropout_prob, bias = num_heads, d_out, dropout, qkv_bias

        # Number of features per head
        self.d_k = d_model // heads
        # Number of heads
        self.heads = heads

        # These transform the `query`, `key` and `value` vectors for multi-headed attention.
        self.W_query = nn.Linear(d_in, heads * self.d_k, bias=bias)
        self.W_key = nn.Linear(d_in, heads * self.d_k, bias=bias)
        self.W_value = nn.Linear(d_in, heads * self.d_k, bias=True)

        # Softmax for attention along the time dimension of `key`
        self.softmax = nn.Softmax(dim=1)

        # Output layer
        self.out_proj = nn.Linear(d_model, d_model)
        # Dropout
        self.dropout = nn.Dropout(dropout_prob)
        # Scaling factor before the softmax
        self.scale = 1 / math.sqrt(self.d_k)

        # We store attentions so that it can be used for logging, or other computations if needed
        self.attn = None

        # adapter: the contract's causal mask, in the author's mask layout `[seq_len_q, seq_len_k, batch_size]`
        # (`mask[i, j, b]` = query i may attend to key j)
        self.register_buffer("causal_mask", torch.tril(torch.ones(context_length, context_length)).unsqueeze(-1),
                             persistent=False)

    def prepare_for_multi_head_attention(self, linear, x: torch.Tensor):
        # `PrepareForMultiHeadAttention.forward`, with the linear layer passed in
        head_shape = x.shape[:-1]

        # Linear transform
        x = linear(x)

        # Split last dimension into heads
        x = x.view(*head_shape, self.heads, self.d_k)

        # Output has shape `[seq_len, batch_size, heads, d_k]` or `[batch_size, d_model]`
        return x

    def get_scores(self, query: torch.Tensor, key: torch.Tensor):
        # Calculate $Q K^\top$ or $S_{ijbh} = \sum_d Q_{ibhd} K_{jbhd}$
        return torch.einsum('ibhd,jbhd->ijbh', query, key)

    def forward(self, x):
        # adapter: the contract's (batch, tokens, d_in) self-attention input in the author's `[seq_len, batch_size, d]`
        query = key = value = x.transpose(0, 1)
        mask = self.causal_mask[:query.shape[0], :query.shape[0]]

        # `query`, `key` and `value`  have shape `[seq_len, batch_size, d_model]`
        seq_len, batch_size, _ = query.shape

        if mask is not None:
            assert mask.shape[0] == 1 or mask.shape[0] == query.shape[0]
            assert mask.shape[1] == key.shape[0]
            assert mask.shape[2] == 1 or mask.shape[2] == query.shape[1]

            # Same mask applied to all heads.
            mask = mask.unsqueeze(-1)

        # Prepare `query`, `key` and `value` for attention computation.
        # These will then have shape `[seq_len, batch_size, heads, d_k]`.
        query = self.prepare_for_multi_head_attention(self.W_query, query)
        key = self.prepare_for_multi_head_attention(self.W_key, key)
        value = self.prepare_for_multi_head_attention(self.W_value, value)

        # Compute attention scores $Q K^\top$.
        # This gives a tensor of shape `[seq_len, seq_len, batch_size, heads]`.
        scores = self.get_scores(query, key)

        # Scale scores $\frac{Q K^\top}{\sqrt{d_k}}$
        scores *= self.scale

        # Apply mask
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))

        # $softmax$ attention along the key sequence dimension
        attn = self.softmax(scores)

        # Apply dropout
        attn = self.dropout(attn)

        # Multiply by values
        x = torch.einsum("ijbh,jbhd->ibhd", attn, value)

        # Save attentions for any other calculations
        self.attn = attn.detach()

        # Concatenate multiple heads
        x = x.reshape(seq_len, batch_size, -1)

        # Output layer
        # adapter: back to the contract's batch-first layout
        return self.out_proj(x).transpose(0, 1)
