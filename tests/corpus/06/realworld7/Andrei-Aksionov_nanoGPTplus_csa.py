# expect: dropout_misplaced
# bug-lines: 88
# source: Andrei-Aksionov/nanoGPTplus @3fb01c368db28f905904feed962cc0468771ed5c, src/model/gpt_language_model/attention.py (CausalSelfAttention)
# changes: constructor (embeddings_size, context_size, num_heads, bias, dropout) -> (n_embd, n_head, block_size,
#          dropout=0.0, flash=False) with bias=True (the contract's c_attn/c_proj have a bias); layers renamed
#          causal_self_attention -> c_attn, causal_projection -> c_proj (contract names); the author's file has only the
#          manual path, so the contract's flash=True branch was added in nanoGPT's form (F.scaled_dot_product_attention,
#          is_causal=True, dropout_p only in training) and the manual lines were indented under `else:`.
#          The residual dropout after the output projection is the author's and is kept.
import torch
import torch.nn.functional as F
from torch import Tensor, nn


# TODO: remove below line
# flake8: noqa
class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0, flash: bool = False) -> None:
        super().__init__()

        if n_embd % n_head != 0:
            msg = "Embeddings size should be divisible by number of heads without residual, "
            f"but was provided: embeddings_size={n_embd}; num_heads={n_head}"
            raise ValueError(msg)

        self.embeddings_size = n_embd
        self.context_size = block_size
        self.num_heads = n_head
        # self.bias = bias
        self.dropout = dropout
        self.flash = flash

        # key, query and value projections for all heads in a single batch, hence `* 3`
        self.c_attn = nn.Linear(n_embd, n_embd * 3, bias=True)
        # output projection
        self.c_proj = nn.Linear(n_embd, n_embd, bias=True)
        # regularization
        self.attention_dropout = nn.Dropout(self.dropout)
        self.residual_dropout = nn.Dropout(self.dropout)

        # TODO: why it's called 'bias'?
        self.register_buffer(
            "bias",
            torch.tril(
                torch.ones(self.context_size, self.context_size),
            ).view(1, 1, self.context_size, self.context_size),
        )
        # TODO: this should also work
        # self.register_buffer("bias", torch.tril(torch.ones(1, 1, self.context_size, self.context_size)))
        # TODO: most likely we don't need 4 dim tril, 2 dim is enough

    def forward(self, x: Tensor) -> Tensor:
        # batch, sequence length, embedding size
        B, T, C = x.shape

        # (B, T, C) -> (B, T, C * 3) -> (B, T, C)
        query, key, value = self.c_attn(x).split(self.embeddings_size, dim=2)  # TODO: maybe dim=-1

        # TODO: is transpose(1,2) == .mT?
        key = key.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)
        # key = key.view(B, T, self.num_heads, -1).transpose(1, 2)  # (B, nh, T, hs)
        query = query.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)
        value = value.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)

        if self.flash:
            y = F.scaled_dot_product_attention(
                query, key, value, attn_mask=None, dropout_p=self.dropout if self.training else 0.0, is_causal=True
            )
        else:
            attention_scores: Tensor = query @ key.mT  # (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
            head_size = key.shape[-1]
            attention_scores *= head_size**-0.5  # (B, nh, T, T)

            # NOTE: if to use 2 dim tril -> self.bias[:T, :T]
            attention_scores = attention_scores.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))  # (B, nh, T, T)

            attention_scores = F.softmax(attention_scores, dim=-1)  # (B, nh, T, T)
            attention_scores = self.attention_dropout(attention_scores)  # (B, nh, T, T)

            y = attention_scores @ value  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)

        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side

        # out projection
        y = self.c_proj(y)
        # TODO: why do we need residual dropout here? Maybe wrong naming?
        # perhaps proj_dropout
        y = self.residual_dropout(y)

        return y
