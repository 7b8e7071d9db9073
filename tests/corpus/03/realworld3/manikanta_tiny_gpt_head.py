# expect: api_mismatch
# also: scale_wrong_dim
# bug-lines: 19
# source: Manikanta5112/custom_tiny_gpt @13a28af25184dac22585bf24c42f7cc13b3e58c8, v2.py (Head)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   Head(head_size) with globals n_embd/block_size renamed CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False);
#   self.key/self.query/self.value renamed W_key/W_query/W_value (both of the author's `self.query = ...` lines become W_query), bias=qkv_bias
import torch
import torch.nn as nn
from torch import functional as F

class CausalAttention(nn.Module):
    """ one head of self attention"""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer('tril', torch.tril(torch.ones(context_length, context_length))) # trill is not a parameter of the module, interms of pytorch naming conventions it's called as a buffer


    def forward(self, x):
        B, T, C = x.shape
        k = self.W_key(x) # (B,T,C)
        q = self.W_query(x) # (B,T,C)
        # compute attention scores ("affinities")
        wei = q @ k.transpose(-2,-1) * C**-0.5
        wei = wei.masked_fill(self.tril[:T,:T] == 0, float('-inf')) # (B,T,T)
        wei = F.softmax(wei, dim=-1) # (B,T,T)
        # perform the weighted aggregation of the values
        v = self.W_value(x) # (B,T,C)
        out = wei @ v
        return out
