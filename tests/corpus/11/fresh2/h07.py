# expect: rope_positions_ignored
# bug-lines: 10
import torch


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2:]
    half = d // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float64, device=x.device) * 2 / d)
    pos = torch.arange(T, dtype=torch.float64, device=x.device)   # token t is at position t
    freqs = pos[:, None] * inv_freq[None, :]
    cos = freqs.cos().to(x.dtype)
    sin = freqs.sin().to(x.dtype)
    x1 = x[..., :half]
    x2 = x[..., half:]
    rotated = torch.empty_like(x)
    rotated[..., :half] = x1 * cos - x2 * sin
    rotated[..., half:] = x2 * cos + x1 * sin
    return rotated
