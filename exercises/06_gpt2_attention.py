"""Exercise 6: GPT-2 style causal self-attention with a fused QKV projection and a flash path.

This is the attention block of nanoGPT / GPT-2. One linear layer, c_attn, computes the queries,
keys and values of every head in a single matmul; forward has two paths that must agree:
a manual one (the matrix products, mask and softmax you wrote in exercise 4) and a fast one
through torch.nn.functional.scaled_dot_product_attention (allowed in this exercise only).

Contract (the grader loads its own weights into your module by parameter name):
    CausalSelfAttention(n_embd, n_head, block_size, dropout=0.0, flash=False)
    self.c_attn = nn.Linear(n_embd, 3 * n_embd)   (with bias); its output is [q | k | v] along the last dim
    self.c_proj = nn.Linear(n_embd, n_embd)       (with bias)
    n_embd not divisible by n_head must raise an exception.
    forward(x): x is (batch, tokens, n_embd) with tokens <= block_size; returns (batch, tokens, n_embd).
    Causal: token t attends to tokens 0..t. head size hs = n_embd // n_head; scores scaled by 1/sqrt(hs).
    Dropout (rate `dropout`) acts on the attention weights, in training mode only, on both paths
    (no residual dropout after c_proj here: in nanoGPT that one belongs to the block).
    flash=False: manual path. flash=True: F.scaled_dot_product_attention. Both give the same output.

Shapes along the way:
    c_attn(x) (B, T, 3C) -split-> q, k, v (B, T, C) each -view-> (B, T, nh, hs) -transpose(1, 2)-> (B, nh, T, hs)
    scores (B, nh, T, T); y (B, nh, T, hs) -> (B, T, C) -> c_proj

Check your work with:  grade exercise 6
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        # TODO: raise if n_embd is not divisible by n_head
        # TODO: c_attn (n_embd -> 3 * n_embd) and c_proj (n_embd -> n_embd), both with bias
        # TODO: keep n_head, n_embd, dropout and flash; an nn.Dropout for the attention weights
        # TODO: register a (block_size, block_size) causal mask as a buffer (the manual path needs it)
        raise NotImplementedError("create c_attn, c_proj, the dropout and the mask buffer")

    def forward(self, x):
        # TODO: B, T, C = x.size(); q, k, v = c_attn(x) split into three (B, T, C) tensors, in that order
        # TODO: each -> (B, nh, T, hs) with view + transpose(1, 2)
        # TODO: flash path: F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=...)
        #       where dropout_p is the dropout rate in training mode and 0.0 in eval mode
        # TODO: manual path: scores / sqrt(hs), mask the future, softmax, dropout, @ v
        # TODO: merge the heads back to (B, T, C) and apply c_proj
        raise NotImplementedError("compute causal self-attention")
