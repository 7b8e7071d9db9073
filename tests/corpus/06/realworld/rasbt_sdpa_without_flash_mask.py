# expect: mask_inverted
# source: rasbt/LLMs-from-scratch/ch03/02_bonus_efficient-multihead-attention/mha-implementations.ipynb (commit 28c65cdfbc3338e2e040016eea4b7fdf556e4d57):
#   manual path = class MultiHeadAttentionCombinedQKV, flash path = class MHAPyTorchSDPAWithoutFlash (same qkv/proj layout)
#   bug reported in https://github.com/rasbt/LLMs-from-scratch/issues/1061: the True-above-diagonal mask is passed
#   to F.scaled_dot_product_attention, whose boolean attn_mask means True = may attend
# license: Apache-2.0
# changes: the two classes share one constructor CausalSelfAttention(n_embd, n_head, block_size, dropout=0.0,
#   flash=False) (contract signature; d_in = d_out = n_embd, context_length = block_size, qkv_bias = True, the
#   contract's c_attn has a bias); qkv -> c_attn, proj -> c_proj (contract names); flash selects the second
#   class's forward body; the SDPA class's own bool "mask" buffer is registered as mask_sdpa (the manual
#   class already owns "mask"); dropout rate kept as dropout_p. The divisibility assert is kept. Bodies as written.
# bug-lines: 39, 100, 102, 104, 105
import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        d_in = d_out = n_embd
        num_heads, context_length = n_head, block_size

        assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.flash = flash

        self.c_attn = nn.Linear(d_in, 3 * d_out, bias=True)
        self.c_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.dropout_p = dropout

        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )
        self.register_buffer("mask_sdpa", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        if self.flash:
            return self._forward_sdpa(x)
        batch_size, num_tokens, embed_dim = x.shape

        # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
        qkv = self.c_attn(x)

        # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
        qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

        # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)

        # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_head, num_tokens, head_dim)
        queries, keys, values = qkv.unbind(0)

        # (b, num_heads, num_tokens, head_dim) --> (b, num_heads, num_tokens, num_tokens)
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores.masked_fill(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf
        )

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # (b, num_heads, num_tokens, num_tokens) --> (b, num_heads, num_tokens, head_dim)
        context_vec = attn_weights @ values

        # (b, num_heads, num_tokens, head_dim) --> (b, num_tokens, num_heads, head_dim)
        context_vec = context_vec.transpose(1, 2)

        # (b, num_tokens, num_heads, head_dim) --> (b, num_tokens, embed_dim)
        context_vec = context_vec.contiguous().view(batch_size, num_tokens, embed_dim)

        context_vec = self.c_proj(context_vec)

        return context_vec

    def _forward_sdpa(self, x):
        batch_size, num_tokens, embed_dim = x.shape

        # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
        qkv = self.c_attn(x)

        # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
        qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

        # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)

        # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_heads, num_tokens, head_dim)
        queries, keys, values = qkv

        use_dropout = 0. if not self.training else self.dropout_p

        # Ensure attn_mask is compatible with expected shape and `batch_first=True`
        # No need to manually adjust for num_heads; ensure it's right for the sequence
        if self.context_length >= num_tokens:
            attn_mask = self.mask_sdpa[:num_tokens, :num_tokens]
        else:
            attn_mask = self.mask_sdpa[:self.context_length, :self.context_length]

        context_vec = nn.functional.scaled_dot_product_attention(
            queries, keys, values, attn_mask=attn_mask, dropout_p=use_dropout, is_causal=False)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.transpose(1, 2).contiguous().view(batch_size, num_tokens, self.d_out)

        context_vec = self.c_proj(context_vec)

        return context_vec
