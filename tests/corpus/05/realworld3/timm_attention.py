# expect: pass
# source: huggingface/pytorch-image-models @02bb6b3e3e423554c211eaa0c6b419461336f94e, timm/layers/attention.py (Attention, maybe_add_mask, resolve_self_attn_mask)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   Attention(dim, num_heads, ...) -> MultiHeadAttention(hidden_size, num_heads) with qkv_bias=True (contract layers have bias), no norms, no dropout;
#   fused qkv Linear -> w_q, w_k, w_v concatenated in timm's [q | k | v] order; proj -> w_o; the fused F.scaled_dot_product_attention branch
#   removed (forbidden in exercise 5; timm runs its manual branch when fused attention is off); fx decorators dropped; forward(X) with no mask
from typing import Final, Optional, Type

import torch
from torch import nn as nn
from torch.nn import functional as F


def maybe_add_mask(scores: torch.Tensor, attn_mask: Optional[torch.Tensor] = None):
    return scores if attn_mask is None else scores + attn_mask


def resolve_self_attn_mask(
        seq_len: int,
        attn: torch.Tensor,
        attn_mask: Optional[torch.Tensor] = None,
        is_causal: bool = False,
) -> Optional[torch.Tensor]:
    # Build additive bias matching SDPA semantics for self-attention
    # is_causal and attn_mask are mutually exclusive (is_causal takes precedence)
    if is_causal:
        attn_bias = attn.new_full((seq_len, seq_len), float('-inf')).triu_(1)
    elif attn_mask is None:
        attn_bias = None
    elif attn_mask.dtype == torch.bool:
        attn_bias = torch.zeros_like(attn_mask, dtype=attn.dtype)
        attn_bias.masked_fill_(~attn_mask, float('-inf'))
    else:
        attn_bias = attn_mask
    return attn_bias


class MultiHeadAttention(nn.Module):
    """Standard Multi-head Self Attention module with QKV projection."""
    fused_attn: Final[bool]

    def __init__(self, hidden_size, num_heads):
        super().__init__()
        dim = hidden_size
        attn_head_dim, dim_out, qkv_bias, qk_norm, scale_norm = None, None, True, False, False
        proj_bias, attn_drop, proj_drop, norm_layer = True, 0., 0., None
        dim_out = dim_out or dim
        head_dim = attn_head_dim
        if head_dim is None:
            assert dim % num_heads == 0, 'dim should be divisible by num_heads'
            head_dim = dim // num_heads
        if qk_norm or scale_norm:
            assert norm_layer is not None, 'norm_layer must be provided if qk_norm or scale_norm is True'

        self.num_heads = num_heads
        self.head_dim = head_dim
        self.attn_dim = num_heads * head_dim
        self.scale = head_dim ** -0.5
        self.fused_attn = False

        self.w_q = nn.Linear(dim, self.attn_dim, bias=qkv_bias)
        self.w_k = nn.Linear(dim, self.attn_dim, bias=qkv_bias)
        self.w_v = nn.Linear(dim, self.attn_dim, bias=qkv_bias)
        self.q_norm = norm_layer(head_dim) if qk_norm else nn.Identity()
        self.k_norm = norm_layer(head_dim) if qk_norm else nn.Identity()
        self.attn_drop = nn.Dropout(attn_drop)
        self.norm = norm_layer(self.attn_dim) if scale_norm else nn.Identity()
        self.w_o = nn.Linear(self.attn_dim, dim_out, bias=proj_bias)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, X):
        x, attn_mask, is_causal = X, None, False
        B, N, C = x.shape
        qkv = torch.cat([self.w_q(x), self.w_k(x), self.w_v(x)], dim=-1)
        qkv = qkv.reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)

        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        attn_bias = resolve_self_attn_mask(N, attn, attn_mask, is_causal)
        attn = maybe_add_mask(attn, attn_bias)
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = attn @ v

        x = x.transpose(1, 2).reshape(B, N, self.attn_dim)
        x = self.norm(x)
        x = self.w_o(x)
        x = self.proj_drop(x)
        return x
