# expect: wrong_output
# bug-lines: 28
# source: delphinemico/build-llm-from-scratch-pytorch @e43eb812cbf54b7069f6df79406147c301e15aaf, chapter_03/exercises/coding_attention_mechanisms.ipynb (code cell 58, CausalAttention)
# changes: the notebook cell taken as a file; import torch added (it comes from an earlier cell of the notebook)
import torch
import torch.nn as nn
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1)) # will help with gpu, cpu devices

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        d_k = keys.shape[-1]
        attn_scores = queries @ keys.transpose(1,2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf) # applying the efficient causal mask to attn_scores
        attn_weights = torch.softmax(attn_scores/d_k**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights) # applying dropout mask with prob=dropout to attn_weights
        context_vec = attn_weights @ values
        return values
