# expect: rope_base_ignored
# also: runtime_error
# bug-lines: 12, 16, 21, 22
# source: allenai/OLMo @00794908450625854834534ab0332982136736e2, olmo/model.py (RotaryEmbedding.get_rotary_embedding, rotate_half, apply_rotary_pos_emb, forward)
# changes: function apply_rope(x, positions, base) for one tensor instead of the (q, k) pair, with rope_full_precision=True; dim = x.shape[-1] for d_model // n_heads; the cached table rows pos_sin[:, :, key_len - query_len : key_len] computed for the given positions instead (seq = positions), without the buffer cache
import torch
from torch import einsum


def get_rotary_embedding(dim: int, positions: torch.Tensor, device: torch.device):
    with torch.autocast(device.type, enabled=False):
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device, dtype=torch.float) / dim))
        seq = positions.to(device=device, dtype=torch.float)
        freqs = einsum("i , j -> i j", seq, inv_freq)
        positions = torch.cat((freqs, freqs), dim=-1)
        pos_sin, pos_cos = positions.sin()[None, None, :, :], positions.cos()[None, None, :, :]
    return pos_sin, pos_cos


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hs = x.size()
    x = x.view(B, nh, T, 2, hs // 2)
    x1, x2 = x.unbind(dim=-2)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(pos_sin: torch.Tensor, pos_cos: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return ((t * pos_cos) + (rotate_half(t) * pos_sin)).to(t.dtype)


def apply_rope(x, positions, base=10000.0):
    x_ = x.float()

    with torch.autocast(x.device.type, enabled=False):
        pos_sin, pos_cos = get_rotary_embedding(x_.shape[-1], positions, x_.device)
        pos_sin = pos_sin.type_as(x_)
        pos_cos = pos_cos.type_as(x_)
        x_ = apply_rotary_pos_emb(pos_sin, pos_cos, x_)
    return x_.type_as(x)
