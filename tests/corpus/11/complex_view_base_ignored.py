# expect: rope_base_ignored
# also: runtime_error
# bug-lines: 10, 13
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    freqs = 10000.0 ** (-torch.arange(half, dtype=torch.float32, device=x.device) * 2 / d)
    angles = positions.float()[:, None] * freqs
    rotation = torch.polar(torch.ones_like(angles), angles)  # (T, d/2) unit complex numbers
    pairs = torch.view_as_complex(torch.stack((x[..., :half], x[..., half:]), dim=-1).contiguous())
    turned = torch.view_as_real(pairs * rotation)
    return torch.cat((turned[..., 0], turned[..., 1]), dim=-1).to(x.dtype)
