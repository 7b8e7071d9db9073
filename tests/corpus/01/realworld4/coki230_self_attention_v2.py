# expect: runtime_error
# also: batched_transpose, nan_output
# bug-lines: 23, 24
# source: coki230/build_llm @39cdd196e2b712367af1ff6b4aecf2f6d269d751, SelfAttention_v2.py (SelfAttention_v2)
# changes: class renamed SelfAttention_v2 -> SelfAttention and the contract's qkv_bias argument added (the author has no
#   bias option and hard-codes bias=False: the layers take bias=qkv_bias); the author's set_parameters/get_parameter
#   helpers (weight-copy utilities, no contract input) removed. The scaling line is the author's, as published.
import torch
import torch.nn as nn

class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        querys = self.W_query(x)
        values = self.W_value(x)

        attention_scores = querys @ keys.T
        attention_weights = torch.softmax(attention_scores ** 0.5, dim=-1)
        context_vector = attention_weights @ values
        return context_vector
