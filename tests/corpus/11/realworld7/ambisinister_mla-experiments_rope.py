# expect: dtype_not_kept
# bug-lines: 30
# source: ambisinister/mla-experiments @88f178893979a8233d981b80061be85b9dbfcca8, modeling/attention/utils.py (rotate_half, apply_rope_x) + modeling/attention/mha.py (Rope_MHA.__init__ and Rope_MHA.forward, the RoPE lines)
# changes: the contract's apply_rope(x, positions, base=10000.0) builds the author's freqs/emb with rope_theta = base and
#          dh = x's last dim, using the given positions instead of arange(max_seq_len) sliced at past_length (the
#          cos_cached/sin_cached buffers followed the module's device, so freqs are created on x.device), then applies
#          apply_rope_x; the [None, None] broadcast dims are dropped so any (..., T, d) input works.
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)

def apply_rope_x(x, cos, sin):
    return (x * cos) + (rotate_half(x) * sin)


def apply_rope(x, positions, base=10000.0):
    dh = x.shape[-1]
    rope_theta = base
    freqs = 1.0 / (rope_theta ** (torch.arange(0, dh, 2, device=x.device).float() / dh))
    emb = torch.outer(positions.to(x.device).float(), freqs)
    cos_cached = emb.cos()
    sin_cached = emb.sin()

    ## Apply RoPE
    cos = cos_cached[:, :dh//2].repeat(1, 2)
    sin = sin_cached[:, :dh//2].repeat(1, 2)
    return apply_rope_x(x, cos, sin)
