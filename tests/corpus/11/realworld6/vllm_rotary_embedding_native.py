# expect: pass
# source: vllm-project/vllm @0042be241b0fc66d2357ebf144bf870bfdff7f10, vllm/model_executor/layers/rotary_embedding.py (_apply_rotary_emb_torch, RotaryEmbedding._compute_inv_freq/_compute_cos_sin_cache/forward_native)
# changes: function form; rotary_dim = head_size = d, is_neox_style=True, max_position_embeddings = max(positions) + 1; the cos_sin_cache buffer (cast to the model dtype, moved with the module) is cast to x's dtype and put on x's device; x laid out (..., T, d) is moved to vLLM's (num_tokens, heads, head_size) layout at the entry and back at the end; key handling dropped (one tensor is rotated)
import math

import torch


def _apply_rotary_emb_torch(
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    is_neox_style: bool,
) -> torch.Tensor:
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    else:
        return torch.stack((o1, o2), dim=-1).flatten(-2)


def _compute_inv_freq(base: float, rotary_dim: int) -> torch.Tensor:
    """Compute the inverse frequency."""
    inv_freq = 1.0 / (base**(torch.arange(
        0, rotary_dim, 2, dtype=torch.float) / rotary_dim))
    return inv_freq


def _compute_cos_sin_cache(base, rotary_dim, max_position_embeddings) -> torch.Tensor:
    """Compute the cos and sin cache."""
    inv_freq = _compute_inv_freq(base, rotary_dim)
    t = torch.arange(max_position_embeddings, dtype=torch.float)

    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    cos = freqs.cos()
    sin = freqs.sin()
    cache = torch.cat((cos, sin), dim=-1)
    return cache


def apply_rope(x, positions, base=10000.0):
    head_size = rotary_dim = x.shape[-1]
    is_neox_style = True
    cos_sin_cache = _compute_cos_sin_cache(base, rotary_dim, int(positions.max()) + 1)
    cos_sin_cache = cos_sin_cache.to(device=x.device, dtype=x.dtype)
    x_tokens_first = x.movedim(-2, 0)

    positions = positions.flatten()
    num_tokens = positions.shape[0]
    cos_sin = cos_sin_cache.index_select(0, positions)
    cos, sin = cos_sin.chunk(2, dim=-1)

    query = x_tokens_first
    query_shape = query.shape
    query = query.reshape(num_tokens, -1, head_size)
    query_rot = query[..., :rotary_dim]
    query_pass = query[..., rotary_dim:]
    query_rot = _apply_rotary_emb_torch(query_rot, cos, sin,
                                        is_neox_style)
    query = torch.cat((query_rot, query_pass), dim=-1).reshape(query_shape)
    return query.movedim(0, -2)
