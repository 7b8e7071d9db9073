# expect: pass
# source: Alexander-Nestor-Bergmann/pytorch-transformer-demo @ed7097e462bfea6b0c8320b9a8d3a32d3e7f5537, src/transformer/attention.py (scaled_dot_product_attention, MultiHeadAttention)
# changes: MultiHeadAttention(d_model, h, dropout) becomes CrossAttention(d_in, d_context, d_out, num_heads, qkv_bias=False)
#          (contract): w_q/w_k/w_v/w_o renamed W_query (d_in -> d_out), W_key/W_value (d_context -> d_out), bias=qkv_bias,
#          out_proj with bias (contract); forward(query, key, value, mask) becomes forward(x, context,
#          context_padding_mask) with key = value = context, and the (B, S) mask is unsqueezed to (B, 1, 1, S) as the
#          author's create_padding_mask does; the unused dropout attribute and the docstrings trimmed.
import math
import torch
import torch.nn as nn
from torch import Tensor
from typing import Optional


def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Optional[Tensor] = None
) -> Tensor:
    d_k = query.size(-1)
    # scores shape: (batch_size, num_heads, seq_len_q, seq_len_k)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    if mask is not None:
        # Mask shape needs to be broadcastable to scores shape
        # Where mask is True, fill with -inf
        scores = scores.masked_fill(mask, float("-inf"))

    # attn_weights shape: (batch_size, num_heads, seq_len_q, seq_len_k)
    attn_weights = torch.softmax(scores, dim=-1)

    # output shape: (batch_size, num_heads, seq_len_q, d_v)
    output = torch.matmul(attn_weights, value)
    return output


class CrossAttention(nn.Module):
    def __init__(self, d_in: int, d_context: int, d_out: int, num_heads: int, qkv_bias: bool = False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_model ({d_out}) must be divisible by h ({num_heads})")

        self.d_model = d_out
        self.h = num_heads
        self.d_k = d_out // num_heads  # Dimension of keys/queries per head
        self.d_v = d_out // num_heads  # Dimension of values per head

        # Linear layers for Q, K, V projections (input)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)

        # Final linear layer (output)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(
        self, x: Tensor, context: Tensor, context_padding_mask: Optional[Tensor] = None
    ) -> Tensor:
        query, key, value = x, context, context
        mask = None
        if context_padding_mask is not None:
            mask = context_padding_mask.unsqueeze(1).unsqueeze(2)  # shape: (batch_size, 1, 1, seq_len)
        batch_size = query.size(0)

        # 1. Linear projections: (batch_size, seq_len, d_model) -> (batch_size, seq_len, d_model)
        q = self.W_query(query)
        k = self.W_key(key)
        v = self.W_value(value)

        # 2. Reshape for multi-head processing
        # (batch_size, seq_len, d_model) -> (batch_size, seq_len, h, d_k/d_v)
        # -> (batch_size, h, seq_len, d_k/d_v)
        q = q.view(batch_size, -1, self.h, self.d_k).transpose(1, 2)
        k = k.view(batch_size, -1, self.h, self.d_k).transpose(1, 2)
        v = v.view(batch_size, -1, self.h, self.d_v).transpose(1, 2)

        # 3. Apply scaled dot-product attention
        # The mask is passed directly; scaled_dot_product_attention handles broadcasting
        attn_output = scaled_dot_product_attention(q, k, v, mask=mask)

        # 4. Concatenate heads and reshape back
        # (batch_size, h, seq_len_q, d_v) -> (batch_size, seq_len_q, h, d_v)
        # -> (batch_size, seq_len_q, d_model)
        attn_output = (
            attn_output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        )

        # 5. Final linear layer
        # output shape: (batch_size, seq_len_q, d_model)
        output = self.out_proj(attn_output)

        return output
