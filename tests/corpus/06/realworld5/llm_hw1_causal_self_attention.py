# expect: dropout_missing
# also: heads_not_divisible
# bug-lines: 17, 46, 48
# source: PPYYQQ/LLM_hw1 @65d41b7e77d45b9673824d6c0e7bb39d401bb90f, hw1-code/pretrain.py (CausalSelfAttention)
# changes: constructor takes (n_embd, n_head, block_size, dropout=0.0, flash=False) instead of a config object; forward chooses by self.flash between the author's active F.scaled_dot_product_attention line and the author's commented-out manual attention lines (uncommented as written)
import math
import torch
import torch.nn as nn
from torch.nn import functional as F

class CausalSelfAttention(nn.Module):

    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        
        # Key Query Value prjections in a batch
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        # Output projection
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.c_proj.PYQ = 1
        # Regularization
        self.n_head = n_head
        self.n_embd = n_embd
        self.flash = flash
        # Mask
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1,1, block_size, block_size))

    def forward(self, x):
        # Batch size, Seq length, dimension
        B, T, C = x.size()

        qkv = self.c_attn(x)
        q, k , v = qkv.split(self.n_embd, dim = 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1,2) # (B, number of heads, seq length, head size)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1,2) # (B, number of heads, seq length, head size)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1,2) # (B, number of heads, seq length, head size)



        if not self.flash:
            # attention
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            # only attend to the previous
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim = -1)
            y = att @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)# Flash attention


        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.c_proj(y)
        return y
