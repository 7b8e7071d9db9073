# expect: rope_pairing
# source: lucidrains/rotary-embedding-torch/rotary_embedding_torch/rotary_embedding_torch.py, rotate_half,
#         apply_rotary_emb, and the 'lang' frequencies and forward() of RotaryEmbedding (https://github.com/lucidrains/rotary-embedding-torch/blob/8bb4643d1c29f944c47d2e807452ac437689af18/rotary_embedding_torch/rotary_embedding_torch.py)
# license: MIT (Copyright (c) 2021 Phil Wang)
# changes: einops is not an allowed import: rearrange(x, '... (d r) -> ... d r', r = 2) becomes
#          x.unflatten(-1, (-1, 2)), rearrange(x, '... d r -> ... (d r)') becomes x.flatten(-2), and
#          repeat(freqs, '... n -> ... (n r)', r = 2) becomes freqs.repeat_interleave(2, dim=-1); the @autocast('cuda',
#          enabled = False) decorator is dropped (torch.amp is outside the exercise; it only disables autocast).
#          apply_rope(x, positions, base=10000.0) gives the contract's call: the frequencies of
#          RotaryEmbedding(dim=d, theta=base, freqs_for='lang'), computed on x's device, then the author's forward()
#          (einsum '..., f -> ... f' of the positions with the frequencies, each repeated twice) and
#          apply_rotary_emb(freqs, x). The caching, xpos, learned-frequency and interpolation options are left out.
#          The author's pairing is kept: adjacent features (x[2i], x[2i+1]) are rotated together, where the
#          contract pairs x[i] with x[i + d/2].
# bug-lines: 34, 35, 36, 37, 82
from __future__ import annotations

import torch
from torch import einsum


def exists(val):
    return val is not None


def slice_at_dim(t, dim_slice: slice, *, dim):
    dim += (t.ndim if dim < 0 else 0)
    colons = [slice(None)] * t.ndim
    colons[dim] = dim_slice
    return t[tuple(colons)]


def rotate_half(x):
    x = x.unflatten(-1, (-1, 2))
    x1, x2 = x.unbind(dim = -1)
    x = torch.stack((-x2, x1), dim = -1)
    return x.flatten(-2)


def apply_rotary_emb(
    freqs,
    t,
    start_index = 0,
    scale = 1.,
    seq_dim = -2,
    freqs_seq_dim = None
):
    dtype = t.dtype

    if not exists(freqs_seq_dim):
        if freqs.ndim == 2 or t.ndim == 3:
            freqs_seq_dim = 0

    if t.ndim == 3 or exists(freqs_seq_dim):
        seq_len = t.shape[seq_dim]
        freqs = slice_at_dim(freqs, slice(-seq_len, None), dim = freqs_seq_dim)

    rot_dim = freqs.shape[-1]
    end_index = start_index + rot_dim

    assert rot_dim <= t.shape[-1], f'feature dimension {t.shape[-1]} is not of sufficient size to rotate in all the positions {rot_dim}'

    # Split t into three parts: left, middle (to be transformed), and right
    t_left = t[..., :start_index]
    t_middle = t[..., start_index:end_index]
    t_right = t[..., end_index:]

    # Apply rotary embeddings without modifying t in place    
    t_transformed = (t_middle * freqs.cos() * scale) + (rotate_half(t_middle) * freqs.sin() * scale)
        
    out = torch.cat((t_left, t_transformed, t_right), dim=-1)

    return out.type(dtype)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    theta = base
    freqs = 1. / (theta ** (torch.arange(0, dim, 2, device=x.device)[:(dim // 2)].float() / dim))

    freqs = einsum('..., f -> ... f', positions.type(freqs.dtype), freqs)
    freqs = freqs.repeat_interleave(2, dim=-1)

    return apply_rotary_emb(freqs, x)
