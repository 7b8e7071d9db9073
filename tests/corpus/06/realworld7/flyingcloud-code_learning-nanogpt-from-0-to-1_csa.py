# expect: dropout_missing
# bug-lines: 44
# source: flyingcloud-code/learning-nanogpt-from-0-to-1 @ec9a48d2c34a43af9611bc80a4000f7b56af3a44, 23-gpt-forward/code/23-gpt.py (MyCausalSelfAttention)
# changes: class renamed MyCausalSelfAttention -> CausalSelfAttention; constructor (n_embd, n_head, max_block=1024) ->
#          (n_embd, n_head, block_size, dropout=0.0, flash=False), the mask buffer sized by block_size; c_attn/c_proj built
#          with bias (the contract's layers have one; the author had bias=False); the author's file has only the manual
#          path, so the contract's flash=True branch was added in nanoGPT's form (is_causal=True, dropout_p only in
#          training) and the manual lines indented under `else:`. The rest of the lesson file (LayerNorm, MLP, GPT,
#          training script) left out. The author's manual path has no dropout, and that is kept.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    """手搓多头因果注意力：投影 -> 打分 -> 掩码 -> softmax -> 混合（第 21 课）。"""

    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=True)    # QKV 合并投影
        self.c_proj = nn.Linear(n_embd, n_embd, bias=True)        # 输出投影
        self.register_buffer("bias", torch.tril(torch.ones(1, 1, block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.c_attn(x)                                      # (B,T,3C)
        q, k, v = qkv.split(C, dim=2)                             # 切三份
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B,H,T,hd)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))  # 打分
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))  # 只看左边
            att = F.softmax(att, dim=-1)                              # 归一
            y = att @ v                                               # 加权混合
        y = y.transpose(1, 2).contiguous().view(B, T, C)          # 拼回头
        return self.c_proj(y)
