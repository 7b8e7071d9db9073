# expect: rope_pairing
# bug-lines: 32, 35
# source: mistralai/mistral-inference @215fc80d4a00177854b51a93fd3d455094f0e085, one_file_ref.py (precompute_freqs_cis,
#   _reshape_for_broadcast, apply_rotary_emb; Transformer's self.freqs_cis[positions])
# changes: apply_rope(x, positions, base=10000.0) wraps the author's functions: theta = base; the author precomputes freqs_cis
#   for 128_000 positions (moved to the model's device) and indexes it with the positions: the same here, on x's device;
#   apply_rotary_emb rotates xq and xk together: x is passed as both and the first result kept; boundary glue: the author's
#   layout is (batch, seq, heads, head_dim), so the contract's (..., T, d) is laid out as (N, T, 1, d) and put back.
import torch


def _reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """
    freqs_cis: complex - (seq_len, head_dim / 2)
    x: complex - (bsz, seq_len, head_dim / 2)
    """
    ndim = x.ndim
    assert 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1]), (
        freqs_cis.shape,
        (x.shape[1], x.shape[-1]),
    )
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(
    xq: torch.Tensor,
    xk: torch.Tensor,
    freqs_cis: torch.Tensor,
):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = _reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0) -> torch.Tensor:
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    freqs_cis = precompute_freqs_cis(d, 128_000, theta=base).to(x.device)
    freqs_cis = freqs_cis[positions]
    # boundary: (..., T, d) -> the author's (batch, seq, heads, head_dim) and back
    x4 = x.reshape(-1, 1, T, d).transpose(1, 2)
    out, _ = apply_rotary_emb(x4, x4, freqs_cis)
    return out.transpose(1, 2).reshape(x.shape)
