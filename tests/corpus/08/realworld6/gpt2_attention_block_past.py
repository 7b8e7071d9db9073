# expect: heads_not_divisible
# bug-lines: 64
# source: affjljoo3581/GPT2 @01045d6fa043cc798ff77a998ac89e8c6e116a03, src/gpt2/modeling/attention.py (BaseAttention, MultiHeadAttention, AttentionBlock; plus FutureMasking from src/gpt2/modeling/masking.py @16eb1b66f5f73b24cde940a2af22bda9691c6614)
# changes: AttentionBlock becomes KVCacheAttention with the contract's layers (proj_q/proj_k/proj_v/linear -> W_query/W_key/W_value/out_proj, dims split into d_in and d_out, qkv_bias); the past tuple of projected (B, P, d_out) keys/values is read from k_cache/v_cache (heads merged at the entry) and the returned (k, v) are given back with heads split; the future mask the model builds with FutureMasking(x, offset=P) is built at the entry; dropout removed; context_length unused as in the source
import math
import torch
import torch.nn as nn
from typing import Optional, Tuple


class BaseAttention(nn.Module):
    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        # Calculate attention weight logits.
        x = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(k.size(-1))

        # Mask the attention logits.
        if mask is not None:
            x += mask.float() * x.new_tensor(-1e9, dtype=torch.float32)

        # Apply softmax and dropout layer.
        x = x.softmax(-1)

        # Return weighted sum of values.
        return torch.matmul(x, v)


class MultiHeadAttention(BaseAttention):
    def __init__(self, heads: int):
        super().__init__()
        self.heads = heads

    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        # Split each input tensor into multi-heads.
        q = q.view(q.size()[:-1] + (self.heads, q.size(-1) // self.heads))
        k = k.view(k.size()[:-1] + (self.heads, k.size(-1) // self.heads))
        v = v.view(v.size()[:-1] + (self.heads, v.size(-1) // self.heads))

        q = q.transpose(-3, -2)
        k = k.transpose(-3, -2)
        v = v.transpose(-3, -2)

        # Add new axis to the masking tensor.
        if mask is not None:
            mask = mask.unsqueeze(-3)

        # Calculate attentions and merge multi-heads.
        return (super().forward(q, k, v, mask)
                .transpose(-3, -2)
                .contiguous()
                .view(q.size()[:-3] + (q.size(-2), v.size(-1) * self.heads)))


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.attn = MultiHeadAttention(num_heads)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        q = k = v = x
        past = None
        offset = 0
        if k_cache is not None:
            B, nh, P, hs = k_cache.shape
            past = (k_cache.transpose(1, 2).reshape(B, P, nh * hs),
                    v_cache.transpose(1, 2).reshape(B, P, nh * hs))
            offset = P
        seq_len = x.size(-2)
        future = torch.ones((seq_len, seq_len + offset),
                            dtype=torch.bool, device=x.device)
        future = future.triu(offset + 1)
        mask = future.view((1,) * (x.ndim - 2) + future.size())

        # Project input tensors.
        q = self.W_query(q)
        k = self.W_key(k)
        v = self.W_value(v)

        # Reuse previously calculated keys and values.
        if past is not None:
            k = torch.cat((past[0], k), dim=-2)
            v = torch.cat((past[1], v), dim=-2)

        # Calculate multi-headed attention and apply linear projection.
        x = self.out_proj(self.attn(q, k, v, mask))

        heads = self.attn.heads
        return (x,
                k.view(k.size(0), k.size(1), heads, -1).transpose(1, 2),
                v.view(v.size(0), v.size(1), heads, -1).transpose(1, 2))
