# expect: pass
# source: baichuan-inc/Baichuan-7B @0ae400d69160aff8a1cadca97a8aad47b6a70ac6, models/modeling_baichuan.py (RotaryEmbedding, rotate_half, apply_rotary_pos_emb)
# changes: function apply_rope(x, positions, base) for one tensor instead of the (q, k) pair; dim = x.shape[-1]; the cos/sin cache rows cos_cached[position_ids] computed directly for the given positions (the same einsum on those rows), inv_freq on x.device instead of a module buffer; the (bs, seq) position_ids' unsqueeze(1) head axis dropped, positions are (T,)
import torch


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float().to(x.device) / dim))
    t = positions.to(device=inv_freq.device, dtype=inv_freq.dtype)
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    # Different from paper, but it uses a different permutation in order to obtain the same calculation
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(dtype=x.dtype)  # [seq_len, dim]
    sin = emb.sin().to(dtype=x.dtype)  # [seq_len, dim]
    x_embed = (x * cos) + (rotate_half(x) * sin)
    return x_embed
