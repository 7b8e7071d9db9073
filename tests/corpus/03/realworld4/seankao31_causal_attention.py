# expect: pass
# source: seankao31/llm-from-scratch @d0291d19d0ac6695a8415244d0ac2aebe528cd14, causal_attention.py (CausalAttention)
# changes: none.
import torch
from torch import nn

class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        # Buffers are automatically moved to the appropriate device along with our model
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)

        # Keep the batch dimension at 0
        attn_scores = queries @ keys.transpose(1, 2)
        # Operations with a trailing underscore are performed in-place
        attn_scores.masked_fill_(
            # context_length might be > num_tokens
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec
