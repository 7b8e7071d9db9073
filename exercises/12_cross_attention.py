"""Exercise 12: cross-attention, as in the decoder of an encoder-decoder Transformer.

In self-attention, queries, keys and values all come from the same sequence. In cross-attention
the queries come from one sequence (the decoder's tokens, x) and the keys and values from
another (the encoder's output, context): each decoder token looks up what it needs in the
source sentence. The two sequences have different lengths and may have different widths, and
the source sentences of a batch are padded to the same length, so padded context positions
must be blocked. Nothing is causal here: the whole source is known in advance.

Contract (the grader loads its own weights into your module by parameter name):
    CrossAttention(d_in, d_context, d_out, num_heads, qkv_bias=False)
    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
    self.W_key, self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
    self.out_proj = nn.Linear(d_out, d_out)   (with bias); d_out not divisible by num_heads raises.
    forward(x, context, context_padding_mask=None) -> (B, T, d_out)
        x: (B, T, d_in), the queries' sequence; context: (B, S, d_context), the keys' and values' sequence.
        context_padding_mask: bool (B, S), True = padding (never attended to); every context sequence
        has at least one real token. Scores scaled by 1/sqrt(head_dim). Not causal. No dropout.

Shapes along the way (nh heads of hs = d_out // nh features):
    q (B, nh, T, hs); k, v (B, nh, S, hs); scores (B, nh, T, S); mask (B, S) -> (B, 1, 1, S)
    y (B, nh, T, hs) -> (B, T, d_out) -> out_proj

Check your work with:  grade exercise 12
"""
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        # TODO: check that d_out is divisible by num_heads (raise if not)
        # TODO: W_query (d_in -> d_out); W_key, W_value (d_context -> d_out); out_proj (d_out -> d_out)
        raise NotImplementedError("create the projections")

    def forward(self, x, context, context_padding_mask=None):
        # TODO: queries from x, keys and values from context, heads split: (B, nh, T, hs) and (B, nh, S, hs)
        # TODO: scores (B, nh, T, S) / sqrt(hs); block the padded context positions for every query
        # TODO: softmax over the context tokens, @ v, merge heads, out_proj -> (B, T, d_out)
        raise NotImplementedError("compute cross-attention")
