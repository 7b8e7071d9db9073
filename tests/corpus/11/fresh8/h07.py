# expect: rope_direction
# also: rope_base_ignored
# bug-lines: 11, 16, 17
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    half = d // 2
    pair = torch.arange(half, device=x.device, dtype=torch.float32)
    theta = 10000.0 ** (-2 * pair / d)
    angle = torch.einsum("t,f->tf", positions.to(device=x.device, dtype=torch.float32), theta)
    cos = angle.cos().to(x.dtype)
    sin = angle.sin().to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    rotated_first = first * cos + second * sin
    rotated_second = second * cos - first * sin
    return torch.cat((rotated_first, rotated_second), dim=-1)
