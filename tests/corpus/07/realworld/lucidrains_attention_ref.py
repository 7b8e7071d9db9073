# expect: masked_rows_not_zero
# source: lucidrains/memory-efficient-attention-pytorch/memory_efficient_attention_pytorch/memory_efficient_attention.py,
#   def attention (the "regular attention" reference; commit d54f391)
# license: MIT
# changes: attention(q, k, v, mask=None, causal=False, attn_bias=None) -> padded_attention(query, key, value,
#   key_padding_mask=None, causal=False) (contract name/signature; attn_bias dropped); the author's (b, j) mask means
#   True = keep, the contract's key_padding_mask True = padding, so mask = ~key_padding_mask; einops
#   rearrange(mask, 'b j -> b 1 1 j') -> mask[:, None, None, :] (einops is not importable in the grader).
# bug-lines: 40, 42
import torch
from torch import einsum


def exists(val):
    return val is not None


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    q, k, v = query, key, value
    mask = ~key_padding_mask if key_padding_mask is not None else None

    scale = q.shape[-1] ** -0.5
    q = q * scale

    sim = einsum('b h i d, b h j d -> b h i j', q, k)

    mask_value = -torch.finfo(sim.dtype).max

    if exists(mask):
        if mask.ndim == 2:
            mask = mask[:, None, None, :]
        sim = sim.masked_fill(~mask, mask_value)

    if causal:
        i, j = sim.shape[-2:]
        mask = torch.ones(i, j, device = q.device, dtype = torch.bool).triu(j - i + 1)
        sim = sim.masked_fill(mask, mask_value)

    sim = sim - sim.amax(dim = -1, keepdim = True).detach()
    attn = sim.softmax(dim = -1)

    out = einsum('b h i j, b h j d -> b h i d', attn, v)
    return out
