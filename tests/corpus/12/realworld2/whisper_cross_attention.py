# expect: padding_mask_ignored
# source: openai/whisper/whisper/model.py, classes Linear and MultiHeadAttention, used as ResidualAttentionBlock's
#         cross_attn (https://github.com/openai/whisper/blob/c0d2f624c09dc18e709e37c2ad90c039a4eb72a2/whisper/model.py)
# license: MIT (Copyright (c) 2022 OpenAI)
# changes: class renamed CrossAttention; constructor (n_state, n_head) -> the contract's
#          (d_in, d_context, d_out, num_heads, qkv_bias=False); query/key/value/out renamed
#          W_query/W_key/W_value/out_proj, with d_in inputs for W_query, d_context inputs for W_key/W_value and
#          bias=qkv_bias for the three (whisper: query and value with bias, key without; whisper's audio and text
#          widths are both n_state). forward(x, xa=None, mask=None, kv_cache=None) -> forward(x, context,
#          context_padding_mask=None) with xa = context, kv_cache = None and mask = None, as ResidualAttentionBlock
#          calls cross_attn(x, xa, kv_cache=kv_cache): whisper's encoder output is never padded, so its
#          cross-attention has no padding mask, and context_padding_mask is accepted and unused. The SDPA branch of
#          qkv_attention is removed (use_sdpa = False: torch's fused SDPA kernel is not allowed here).
# bug-lines: 49, 63
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Linear(nn.Linear):
    def forward(self, x: Tensor) -> Tensor:
        return F.linear(
            x,
            self.weight.to(x.dtype),
            None if self.bias is None else self.bias.to(x.dtype),
        )


class CrossAttention(nn.Module):
    use_sdpa = False

    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.n_head = num_heads
        self.W_query = Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = Linear(d_out, d_out)

    def forward(
        self,
        x: Tensor,
        context: Tensor,
        context_padding_mask: Optional[Tensor] = None,
    ):
        xa = context
        mask = None
        kv_cache = None
        q = self.W_query(x)

        if kv_cache is None or xa is None or self.W_key not in kv_cache:
            # hooks, if installed (i.e. kv_cache is not None), will prepend the cached kv tensors;
            # otherwise, perform key/value projections for self- or cross-attention as usual.
            k = self.W_key(x if xa is None else xa)
            v = self.W_value(x if xa is None else xa)
        else:
            # for cross-attention, calculate keys and values once and reuse in subsequent calls.
            k = kv_cache[self.W_key]
            v = kv_cache[self.W_value]

        wv, qk = self.qkv_attention(q, k, v, mask)
        return self.out_proj(wv)

    def qkv_attention(
        self, q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)

        qk = (q * scale) @ (k * scale).transpose(-1, -2)
        if mask is not None:
            qk = qk + mask[:n_ctx, :n_ctx]
        qk = qk.float()

        w = F.softmax(qk, dim=-1).to(q.dtype)
        out = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        qk = qk.detach()

        return out, qk
