# expect: kv_cache_mask_offset
# source: openai/whisper/whisper/model.py, classes Linear and MultiHeadAttention, TextDecoder's mask buffer and
#         Whisper.install_kv_cache_hooks' save_to_cache (https://github.com/openai/whisper/blob/c0d2f624c09dc18e709e37c2ad90c039a4eb72a2/whisper/model.py)
# license: MIT (Copyright (c) 2022 OpenAI)
# changes: class renamed KVCacheAttention; constructor (n_state, n_head) -> the contract's
#          (d_in, d_out, context_length, num_heads, qkv_bias=False); query/key/value/out renamed
#          W_query/W_key/W_value/out_proj with d_in inputs and bias=qkv_bias for the first three (whisper: query and
#          value with bias, key without). The causal mask buffer of TextDecoder (fill_(-np.inf).triu_(1); numpy is not
#          allowed, so float("-inf")) is registered here. The cache hooks become explicit: the cache is whisper's
#          (B, P, n_state) key/value projection output, converted from/to the contract's (B, nh, P, hs), and
#          save_to_cache's torch.cat([cache, output], dim=1).detach() is applied to the new keys/values.
#          forward(x, xa=None, mask=None, kv_cache=None) -> forward(x, k_cache=None, v_cache=None), self-attention
#          with the mask always passed (as TextDecoder does). The SDPA branch of qkv_attention is removed
#          (use_sdpa = False: torch's fused SDPA kernel is not allowed here); the manual branch is the author's.
# bug-lines: 76
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


class KVCacheAttention(nn.Module):
    use_sdpa = False

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.n_head = num_heads
        self.W_query = Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = Linear(d_out, d_out)
        mask = torch.empty(context_length, context_length).fill_(float("-inf")).triu_(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(
        self,
        x: Tensor,
        k_cache: Optional[Tensor] = None,
        v_cache: Optional[Tensor] = None,
    ):
        q = self.W_query(x)

        k = self.W_key(x)
        v = self.W_value(x)
        if k_cache is not None:
            # save_to_cache: the hooks prepend the cached kv tensors
            k = torch.cat([k_cache.transpose(1, 2).flatten(start_dim=2), k], dim=1).detach()
            v = torch.cat([v_cache.transpose(1, 2).flatten(start_dim=2), v], dim=1).detach()

        wv, qk = self.qkv_attention(q, k, v, self.mask)
        new_k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        new_v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        return self.out_proj(wv), new_k, new_v

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
