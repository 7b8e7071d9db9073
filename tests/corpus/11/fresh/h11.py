# expect: pass
import torch


def apply_rope(x, positions, base=10000.0):
    """Rotate feature pairs (x[i], x[i + d/2]) by positions[t] * base ** (-2i / d)."""
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError("the last dimension must be even")
    half = d // 2

    # theta_i = base ** (-2i / d), i = 0 .. d/2 - 1, in float64 so large positions stay exact
    i = torch.arange(half, dtype=torch.float64, device=x.device)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64, device=x.device), -2.0 * i / d)

    # one row of angles per token: (T, d/2)
    pos = positions.to(device=x.device, dtype=torch.float64)
    angles = pos.unsqueeze(1) * theta.unsqueeze(0)

    cos = torch.cos(angles).to(x.dtype)  # broadcasts against (..., T, d/2)
    sin = torch.sin(angles).to(x.dtype)

    first = x[..., :half]
    second = x[..., half:]
    out_first = first * cos - second * sin
    out_second = second * cos + first * sin
    return torch.cat((out_first, out_second), dim=-1)
