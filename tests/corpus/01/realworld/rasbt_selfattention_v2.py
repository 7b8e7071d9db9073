# expect: batched_transpose
# source: rasbt/LLMs-from-scratch/ch03/01_main-chapter-code/ch03.ipynb, class SelfAttention_v2 (commit 28c65cdfbc3338e2e040016eea4b7fdf556e4d57)
# license: Apache-2.0
# changes: class renamed SelfAttention_v2 -> SelfAttention (contract name). Computation untouched: the book
#   uses it on a 2-D (tokens, d_in) input, and keys.T is kept as written; the contract also feeds 3-D batches.
# bug-lines: 24
import torch
import torch.nn as nn


class SelfAttention(nn.Module):

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec
