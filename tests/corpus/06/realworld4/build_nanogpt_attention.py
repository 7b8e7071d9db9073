# expect: dropout_missing
# bug-lines: 45, 50
# source: karpathy/build-nanogpt @7ee630c8aa426cc9d22cff30c1b3480a24e016a1 ("switch to flash attention": the flash path) and
#   @fb8bd6efd1bd7c4c894c9256f3bf41420efd1cb2 (its parent: the manual path that commit replaced), train_gpt2.py (CausalSelfAttention)
# changes: CausalSelfAttention(config) -> CausalSelfAttention(n_embd, n_head, block_size, dropout=0.0, flash=False) with the
#   config fields read from the arguments; the two published versions of forward are joined under `if self.flash:` (the
#   7ee630c line) / `else:` (the fb8bd6e lines), everything around them is common to both commits. The author's module has no
#   dropout at all (build-nanogpt trains without it): the contract's dropout argument is accepted and, as in the author's
#   code, never used.
import math
import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):

    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        # output projection
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.c_proj.NANOGPT_SCALE_INIT = 1
        # regularization
        self.n_head = n_head
        self.n_embd = n_embd
        self.flash = flash
        # not really a 'bias', more of a mask, but following the OpenAI/HF naming though
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                     .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)
        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        # nh is "number of heads", hs is "head size", and C (number of channels) = nh * hs
        # e.g. in GPT-2 (124M), n_head=12, hs=64, so nh*hs=C=768 channels in the Transformer
        qkv = self.c_attn(x)
        q, k, v = qkv.split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True) # flash attention
        else:
            # attention (materializes the large (T,T) matrix for all the queries and keys)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side
        # output projection
        y = self.c_proj(y)
        return y
