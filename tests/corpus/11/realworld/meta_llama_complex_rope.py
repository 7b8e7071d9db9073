# expect: rope_pairing
# source: meta-llama/llama/llama/model.py, precompute_freqs_cis + reshape_for_broadcast + apply_rotary_emb (commit 689c7f2)
# license: Llama 2 Community License (LICENSE in the repository)
# changes: apply_rope(x, positions, base) (contract) = precompute_freqs_cis with t = positions instead of
#   arange(end) (the author then slices freqs_cis[start_pos : start_pos + seqlen], i.e. selects by position; the
#   frequency vector is moved to the input's device first, as Transformer.forward moves freqs_cis), then the author's
#   complex64 rotation applied to one tensor instead of the (xq, xk) pair; the author's layout is (bsz, seqlen,
#   heads, head_dim) while the contract's is (..., T, d), so the broadcast reshape is done for the contract's
#   layout (freqs_cis (T, d/2) broadcasts over the leading dims) and flatten(3) -> flatten(-2).
#   Interleaved pairs (x[2i], x[2i+1]) and float32/complex64 numerics as written.
# bug-lines: 26, 27
import torch


def precompute_freqs_cis(dim: int, positions: torch.Tensor, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    freqs = freqs.to(positions.device)
    t = positions  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def apply_rope(x, positions, base=10000.0):
    freqs_cis = precompute_freqs_cis(x.shape[-1], positions, base)
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    x_out = torch.view_as_real(x_ * freqs_cis).flatten(-2)
    return x_out.type_as(x)
