# expect: batched_transpose
# bug-lines: 20
# source: szhongren/build_mini_llm @2c301df7635689b2559b7f3b6e64a692a8d01b09, chapter3/self_attention_v2.py (SelfAttention_v2)
# changes: class renamed SelfAttention_v2 -> SelfAttention (contract name); nothing else.
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        attention_scores = queries @ keys.T  # omega
        attention_weights = torch.softmax(
            attention_scores / keys.shape[-1] ** 0.5, dim=-1
        )
        context_vectors = attention_weights @ values
        return context_vectors
