# expect: batched_transpose
# bug-lines: 23
# source: ashjostan7/LLM_Scratch_GPT2 @23c679d44eafecbec77cae8081ecd2b8f6fd2b28, attention.py (SelfAttention_v1)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   renamed SelfAttention, signature (d_in, d_out, qkv_bias=False); the nn.Parameter(torch.rand(d_in, d_out)) weights used as x @ W
#   became the contract's nn.Linear(d_in, d_out, bias=qkv_bias) layers called as W(x); a stray `import torch.nn as nn` inside the class body removed
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
        query = self.W_query(x)
        value = self.W_value(x)

        attn_scores = query @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ value

        return context_vec
