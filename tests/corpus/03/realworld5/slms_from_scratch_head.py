# expect: pass
# source: Taha-codes/SLMs-from-Scratch @bbe143588f787414c8b09dae1b261b0ea4e5431f, tinystories-dense-m3/model.py (Head)
# changes: class Head(d_embd, head_size, block_size, dropout) renamed CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False); layers key/query/value renamed W_key/W_query/W_value with bias=qkv_bias (contract names)
import torch
import torch.nn as nn
from torch.nn import functional as F

class CausalAttention(nn.Module):
    # init builds the tools
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        # init parameters are instructions for building things
        # They are temporary values only needed during construction
        super().__init__()

        # nn.Linear(in_features, out_features)
        # nn.Linear is the PyTorch version of multiply input by a  learned weight matrix

        #self.x attributes are things you keep and use later

        self.W_key = nn.Linear(d_in, d_out, bias = qkv_bias)    #key weight matrix
        self.W_query = nn.Linear(d_in, d_out, bias = qkv_bias)  #query weight matrix
        self.W_value = nn.Linear(d_in, d_out, bias = qkv_bias)  #value weight matrix
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            'tril', 
            torch.tril(torch.ones(context_length, context_length))
        )
    
    def forward(self, x):
        # our input matrix which is the (B, T, C)
        B, T, C = x.shape

        k = self.W_key(x)     #(B, T, head_size)
        q = self.W_query(x)   #(B, T, head_size)
        v = self.W_value(x)   #(B, T, head_size)

        wei = q @ k.transpose(-2, -1)
        wei = wei * (k.shape[-1] ** -0.5) #(B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)

        out = wei @ v

        return out
