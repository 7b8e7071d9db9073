# expect: dropout_misplaced
# bug-lines: 45
# source: anthonyli358/pytorch-nanogpt @a99b123ee97e0ada31fa0f8516d46c8015468542, src/models/attention.py (CausalSelfAttention)
# changes: constructor (cfg: GPTConfig) -> (n_embd, n_head, block_size, dropout=0.0, flash=False) and cfg.d_model /
#          cfg.n_head / cfg.dropout read from those arguments (contract signature); `from src.config import GPTConfig`
#          removed (not an allowed import). The author always calls F.scaled_dot_product_attention; `flash` is stored
#          and, as in the author's code, not consulted. The residual dropout after c_proj is the author's and is kept.
import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention with a causal mask.

    This is the decoder self-attention from the seq2seq transformer.
    """

    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        assert n_embd % n_head == 0, "d_model must be divisible by n_head"
        self.n_head = n_head
        self.d_model = n_embd
        self.flash = flash
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)  # fused Q, K, V
        self.c_proj = nn.Linear(n_embd, n_embd)  # output projection
        self.attn_dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.d_model, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)  # (B, nh, T, hd)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            is_causal=True,
            dropout_p=self.attn_dropout if self.training else 0.0,
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))
