# expect: rope_pairing
# bug-lines: 19, 20
# source: meta-llama/codellama @077f7332d01650f96ad80c77b099f04a773c0e1e, llama/model.py (precompute_freqs_cis, apply_rotary_emb, Transformer.forward's freqs_cis slice)
# changes: function apply_rope(x, positions, base) for one tensor instead of (xq, xk); theta = base; the precomputed table sliced freqs_cis[start_pos : start_pos + seqlen] computed for the given positions instead; reshape_for_broadcast dropped (the (T, d/2) table broadcasts over (..., T, d/2)), flatten(3) written flatten(-2) for any number of leading axes; the table built on the positions' device and the module-level device global's .to(device) calls replaced by x.device
import torch


def precompute_freqs_cis(dim: int, positions: torch.Tensor, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=positions.device)[: (dim // 2)].float() / dim))

    t = positions.to(device=freqs.device, dtype=torch.float32)  # type: ignore
    freqs = torch.outer(t, freqs)  # type: ignore
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def apply_rope(x, positions, base=10000.0):
    freqs_cis = precompute_freqs_cis(x.shape[-1], positions, base).to(x.device)
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    x_out = torch.view_as_real(x_ * freqs_cis).flatten(-2)
    return x_out.type_as(x)
