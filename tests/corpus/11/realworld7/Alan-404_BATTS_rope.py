# expect: rope_base_ignored
# also: dtype_not_kept
# bug-lines: 19, 27
# source: Alan-404/BATTS @fac13967f4305a0d24a1309e2583e4b5eb7c9e24, model/utils/position.py (RotaryPostionalEmbedding) + model/utils/common.py (rotate_half, apply_rotary_pos_emb)
# changes: the contract's apply_rope(x, positions, base=10000.0) builds what RotaryPostionalEmbedding(dim).forward(length)
#          returns, with t taken from the given positions instead of arange(length) and inv_freq created on x.device (the
#          buffer followed the module's device); the seq_len cache is dropped; apply_rotary_pos_emb's q/k pair reduced
#          to the one tensor x.
import torch


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, device=x.device).float() / dim)).unsqueeze(0)

    t = positions.to(inv_freq.device).unsqueeze(-1).type(inv_freq.dtype)
    freqs = torch.matmul(t, inv_freq)

    emb = torch.cat([freqs, freqs], dim=-1).to(inv_freq.device)
    cos = emb.cos()
    sin = emb.sin()
    return (x * cos) + (rotate_half(x) * sin)
