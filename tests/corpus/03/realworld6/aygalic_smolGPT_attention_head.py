# expect: scale_wrong_dim
# bug-lines: 45
# source: aygalic/smolGPT @0de58f63d9d4ac930f2dec65f5593b25720e9404, smolgpt/model/attention_head.py (AttentionHead)
# changes: class AttentionHead(head_size, n_embed, block_size, dropout) -> CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False) (docstring follows); layers key/query/value renamed W_key/W_query/W_value with bias=qkv_bias (were bias=False)
"""Module for attention head."""

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn import functional as F


class CausalAttention(nn.Module):
    """Attention head module

    Parameters
    ----------
    d_in : int
        Model dimension (latent space size)
    d_out : int
        Size of the head.
    context_length : int
        Context length
    dropout : float
        Dropout
    qkv_bias : bool
        Bias of the key, query and value projections
    """

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False):
        super().__init__()
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor):
        B, T, C = x.shape

        k = self.W_key(x)  # (B, T, 16)
        q = self.W_query(x)  # (B, T, 16)
        v = self.W_value(x)  # (B, T, 16)
        wei = (
            q @ k.transpose(-2, -1) * C**-0.5
        )  # (B, T, 16) @ (B, 16, T), ---> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.W_value(x)
        out = wei @ v
        return out
