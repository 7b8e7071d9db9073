# expect: dropout_missing
# bug-lines: 22, 47
# source: priyangkarghosh/tllm @23637ebe748d2e653437ce7f04eff08ad5451c75, src/model/attention.py (CasualSelfAttention)
# changes: class CasualSelfAttention(config: GPTConfig) renamed CausalSelfAttention(n_embd, n_head, block_size, dropout=0.0, flash=False), config.n_embd/n_head/block_size read from the arguments; the GPTConfig import removed
import math
import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        
        assert n_embd % n_head == 0, "n_embd must be divisible by n_head"
        
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.c_proj.NANOGPT_SCALE_INIT = 1 # no idea what this does
        
        self.n_head = n_head
        self.n_embd = n_embd

        self.register_buffer(
            "bias",
            torch.tril(torch.ones(block_size, block_size))
                .view(1, 1, block_size, block_size)
        )

    def forward(self, x):
        B, T, C = x.size()
        H = C // self.n_head

        # project to q, k, v
        qkv = self.c_attn(x)
        q, k, v = qkv.split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, H).transpose(1, 2)
        k = k.view(B, T, self.n_head, H).transpose(1, 2)
        v = v.view(B, T, self.n_head, H).transpose(1, 2)

        # scaled dot-product attention
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(H))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)

        y = att @ v  # (B, n_head, T, H)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.c_proj(y)
        return y
