# expect: padding_mask_inverted
# bug-lines: 40
# source: sumitdotml/transformers @f8464dbac2a81ea33eaefb42681dfaa90f023e15, simple-transformer/model.py (MultiHeadAttention, create_padding_mask)
# changes: MultiHeadAttention(num_heads, d_model, dropout, qkv_bias) becomes CrossAttention(d_in, d_context, d_out,
#          num_heads, qkv_bias=False) (contract): W_q/W_k/W_v/W_o renamed W_query (d_in -> d_out), W_key/W_value
#          (d_context -> d_out), out_proj with bias (contract); dropout removed (not in the contract); forward(query_input,
#          key_input, value_input, mask) becomes forward(x, context, context_padding_mask) with key = value = context and
#          the (B, S) mask reshaped to (B, 1, 1, S) as the author's create_padding_mask does; returns the output only.
import torch
import torch.nn as nn
from typing import Optional


class CrossAttention(nn.Module):
    def __init__(self, d_in: int, d_context: int, d_out: int, num_heads: int, qkv_bias=False):
        super().__init__()
        self.d_model = d_out
        self.num_heads = num_heads
        assert (
            d_out % num_heads == 0
        ), f"""
        d_model is not divisible by num_heads.
        Received d_model: {d_out}, num_heads: {num_heads}"""

        self.d_k = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    @staticmethod
    def scaled_dot_product_attention(
        query, key, value, mask=None, dropout: Optional[nn.Dropout] = None
    ):
        # [batch, num_heads, q_seq_len, d_model] @ [batch, num_heads, d_model, k_seq_len] -> [batch, num_heads, q_seq_len, k_seq_len]
        attn_scores = query @ key.transpose(-2, -1) / key.shape[-1] ** 0.5

        if mask is not None:
            attn_scores = attn_scores.masked_fill(mask == 0, float("-inf"))

        attn_weights = torch.softmax(attn_scores, dim=-1)
        if dropout is not None:
            attn_weights = dropout(attn_weights)
        attn = attn_weights @ value
        return attn, attn_weights

    def forward(self, x, context, context_padding_mask=None):
        query_input, key_input, value_input = x, context, context
        mask = None
        if context_padding_mask is not None:
            # Shape: [batch_size, 1, 1, sequence_length]
            mask = context_padding_mask.unsqueeze(1).unsqueeze(2)

        batch_size, query_seq_len, _ = query_input.shape
        _, key_seq_len, _ = key_input.shape
        _, value_seq_len, _ = value_input.shape

        q = self.W_query(query_input)  # [batch, seq_len, d_model]
        k = self.W_key(key_input)  # [batch, seq_len, d_model]
        v = self.W_value(value_input)  # [batch, seq_len, d_model]

        # [batch, seq_len, d_model] -> [batch, seq_len, num_heads, d_k] -> [batch, num_heads, seq_len, d_k]
        q = q.view(batch_size, query_seq_len, self.num_heads, self.d_k).transpose(1, 2)
        k = k.view(batch_size, key_seq_len, self.num_heads, self.d_k).transpose(1, 2)
        v = v.view(batch_size, value_seq_len, self.num_heads, self.d_k).transpose(1, 2)

        x, attn_weights = CrossAttention.scaled_dot_product_attention(
            query=q, key=k, value=v, mask=mask
        )

        # [batch, num_heads, seq_len, d_k] -> [batch, seq_len, num_heads, d_k] -> [batch, seq_len, d_model]
        x = x.transpose(1, 2)
        x = x.contiguous().view(
            batch_size, query_seq_len, -1
        )  # output is the query sequence length
        x = self.out_proj(x)
        return x
