# expect: runtime_error
# bug-lines: 15, 17
# source: pradhivrddhi/learning_transformer @58683b86615303a1ac0567ba448647dbe8b5b82b, transformer/encoder/attention_head.py (AttentionHead) + transformer/encoder/scaled_dot_product_attention.py (scaled_dot_product_attention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   class AttentionHead(embed_dim, head_dim) renamed SelfAttention(d_in, d_out, qkv_bias=False); q/k/v renamed W_query/W_key/W_value
#   and given bias=qkv_bias (the contract defines these layers; the author has no bias option, nn.Linear default bias=True);
#   the helper from the sibling module is inlined above the class (from math import sqrt kept); nothing else
from math import sqrt

import torch


def scaled_dot_product_attention(query, key, value):
    dim_k = query.size(-1)
    scores = torch.bmm(query, key.transpose(1,2)) / sqrt(dim_k)
    weights = torch.nn.functional.softmax(scores, dim=-1)
    return torch.bmm(weights, value)


class SelfAttention(torch.nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        attn_outputs = scaled_dot_product_attention(
            self.W_query(x), self.W_key(x), self.W_value(x)
        )
        return attn_outputs
