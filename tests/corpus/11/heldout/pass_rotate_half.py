# expect: pass
# held-out: correct; Hugging Face Llama style rotate_half with cos/sin duplicated to full width via cat((freqs, freqs)).
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64, device=x.device) / dim))
    freqs = torch.outer(positions.to(torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(x.dtype)
    sin = emb.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin
