# expect: not_started
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        # TODO: the three projections W_query, W_key, W_value
        # TODO: a dropout layer
        # TODO: register a (context_length, context_length) causal mask as a buffer
        raise NotImplementedError("create the projections, the dropout and the mask buffer")

    def forward(self, x):
        # TODO: b, num_tokens, d_in = x.shape
        # TODO: scores (b, T, T); block the future using the mask sliced to [:T, :T]
        # TODO: scale, softmax, dropout on the weights, weights @ values -> (b, T, d_out)
        raise NotImplementedError("compute causal attention")
