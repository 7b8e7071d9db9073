"""Exercise 1: sliding-window causal multi-head attention (as in Longformer / Mistral's local attention).

Contract:
    SlidingWindowAttention(d_in, d_out, context_length, num_heads, window, qkv_bias=False)
    W_query, W_key, W_value = nn.Linear(d_in, d_out, bias=qkv_bias); out_proj = nn.Linear(d_out, d_out).
    d_out % num_heads != 0 raises.
    forward(x): (B, T, d_in) -> (B, T, d_out), any T <= context_length.
    Scores are scaled by sqrt(head_dim); query i attends only to keys j with i - window < j <= i.

Check your work with:  grade exercise 1 FILE --pack window-pack
"""
import math

import torch
import torch.nn as nn


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, window, qkv_bias=False):
        super().__init__()
        # TODO: refuse d_out not divisible by num_heads
        # TODO: W_query, W_key, W_value, out_proj
        # TODO: a (context_length, context_length) mask buffer: True where j > i or j <= i - window
        raise NotImplementedError("build the layers and the sliding-window mask")

    def forward(self, x):
        # TODO: project, split heads, scaled scores, sliding-window mask, softmax, merge heads, out_proj
        raise NotImplementedError("compute sliding-window attention")
