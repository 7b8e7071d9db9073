# expect: batched_transpose
# bug-lines: 20
# source: Nahuelluca20/obsidian-garden @5f18bc5a30cc9546725aa295cf5e84c9ea13053d, content/LLM/build-llm-from-scratch/ch3.md (SelfAttention_v2 code block)
# changes: class SelfAttention_v2 renamed SelfAttention; imports added (the note imports them in an earlier block)
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
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec =   attn_weights @ values
        return context_vec
