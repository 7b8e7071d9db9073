# expect: rope_pairing
# source: pytorch-labs/gpt-fast/model.py, functions precompute_freqs_cis and apply_rotary_emb (https://github.com/pytorch-labs/gpt-fast/blob/32971d3129541c5bfb4f715abc33d1c5f408d204/model.py)
# license: BSD-3-Clause (Copyright 2023 Meta)
# changes: apply_rope(x, positions, base=10000.0) gives the contract's call, as Transformer.forward does it:
#          freqs_cis = precompute_freqs_cis(max(positions) + 1, d, base, dtype)[positions], with dtype = x.dtype (the
#          model passes its weights' dtype) and the cache built on x's device; rope_scaling (Llama 3.1) is left out.
#          gpt-fast applies RoPE before the head transpose, to x of shape (B, T, H, D), and views freqs_cis as
#          (1, T, 1, D/2, 2); the contract's x is (..., T, D), so the view becomes (T, D/2, 2) and flatten(3) becomes
#          flatten(-2). The author's pairing is kept: adjacent features (x[2i], x[2i+1]) form a pair (Meta's
#          interleaved layout), where the contract pairs x[i] with x[i + d/2].
# bug-lines: 30, 34, 35
import torch
from torch import Tensor


def precompute_freqs_cis(
    seq_len: int, n_elem: int, base: int = 10000,
    dtype: torch.dtype = torch.bfloat16,
    device=None,
) -> Tensor:
    freqs = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=device)[: (n_elem // 2)].float() / n_elem))
    t = torch.arange(seq_len, device=freqs.device)
    freqs = torch.outer(t, freqs)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    cache = torch.stack([freqs_cis.real, freqs_cis.imag], dim=-1)
    return cache.to(dtype=dtype)


def apply_rotary_emb(x: Tensor, freqs_cis: Tensor) -> Tensor:
    xshaped = x.float().reshape(*x.shape[:-1], -1, 2)
    freqs_cis = freqs_cis.view(xshaped.size(-3), xshaped.size(-2), 2)
    x_out2 = torch.stack(
        [
            xshaped[..., 0] * freqs_cis[..., 0] - xshaped[..., 1] * freqs_cis[..., 1],
            xshaped[..., 1] * freqs_cis[..., 0] + xshaped[..., 0] * freqs_cis[..., 1],
        ],
        -1,
    )

    x_out2 = x_out2.flatten(-2)
    return x_out2.type_as(x)


def apply_rope(x, positions, base=10000.0):
    freqs_cis = precompute_freqs_cis(int(positions.max()) + 1, x.size(-1), base, x.dtype, device=x.device)[positions]
    return apply_rotary_emb(x, freqs_cis)
