# expect: rope_direction
# bug-lines: 14, 15
# source: karpathy/nanochat @025c43273999f1efdc2ba96fec5c19b500428e10, nanochat/gpt.py (apply_rotary_emb, GPT._precompute_rotary_embeddings)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   _precompute_rotary_embeddings as a function with device=x.device; a contract function computes it up to the largest position, indexes the
#   rows by `positions` (GPT slices them) and views x as (B, T, H, D) = (-1, T, 1, d)
import torch


def apply_rotary_emb(x, cos, sin):
    assert x.ndim == 4  # multihead attention
    d = x.shape[3] // 2
    x1, x2 = x[..., :d], x[..., d:] # split up last time into two halves
    y1 = x1 * cos + x2 * sin # rotate pairs of dims
    y2 = x1 * (-sin) + x2 * cos
    out = torch.cat([y1, y2], 3) # re-assemble
    out = out.to(x.dtype) # ensure input/output dtypes match
    return out


def _precompute_rotary_embeddings(seq_len, head_dim, base=10000, device=None):
    # stride the channels
    channel_range = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device)
    inv_freq = 1.0 / (base ** (channel_range / head_dim))
    # stride the time steps
    t = torch.arange(seq_len, dtype=torch.float32, device=device)
    # calculate the rotation frequencies at each (time, channel) pair
    freqs = torch.outer(t, inv_freq)
    cos, sin = freqs.cos(), freqs.sin()
    cos, sin = cos.bfloat16(), sin.bfloat16() # keep them in bfloat16
    cos, sin = cos[None, :, None, :], sin[None, :, None, :] # add batch and head dims for later broadcasting
    return cos, sin


def apply_rope(x, positions, base=10000.0):
    # adapter: GPT precomputes cos/sin for positions 0..seq_len-1 on the model's device and slices them
    # (self.cos[:, T0:T0+T]); here they are computed up to the largest position and indexed by `positions`;
    # the contract's (..., T, d) is viewed as nanochat's (B, T, H, D) layout
    T, d = x.shape[-2], x.shape[-1]
    cos, sin = _precompute_rotary_embeddings(int(positions.max()) + 1, d, base=base, device=x.device)
    cos, sin = cos[:, positions], sin[:, positions]
    out = apply_rotary_emb(x.reshape(-1, T, 1, d), cos, sin)
    return out.reshape(x.shape)
