# expect: pass
# source: google/gemma_pytorch @014acb7ac4563a5f77c76d7ff98f31b568c16508, gemma/model.py (precompute_freqs_cis, apply_rotary_emb; the
#   model's freqs_cis.index_select(0, input_positions)) + gemma/config.py @03e657582d17cb5a8617ebf333c1c16f3694670e (GemmaConfig.max_position_embeddings = 8192)
# changes: apply_rope(x, positions, base=10000.0) wraps the author's two functions: theta = base; the model precomputes
#   freqs_cis for max_seq_len * 2 positions in a buffer (max_seq_len = the config's 8192) and index_selects the input
#   positions: the same here, moved to x's device (as the buffer moves with the model), rope_scaling_factor = 1; boundary glue:
#   apply_rotary_emb takes (batch, seq, heads, head_dim), so the contract's (..., T, d) is laid out as (N, T, 1, d) and the
#   result put back in x's shape.
import torch


def precompute_freqs_cis(dim: int,
                         end: int,
                         theta: float = 10000.0,
                         rope_scaling_factor:int = 1) -> torch.Tensor:
    """Precomputes the frequency cis."""
    freqs = 1.0 / (theta**(torch.arange(0, dim, 2)[:(dim // 2)].float() / dim))
    freqs = freqs/rope_scaling_factor
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def apply_rotary_emb(x: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    """Applies the rotary embedding to the query and key tensors."""
    x_ = torch.view_as_complex(
        torch.stack(torch.chunk(x.transpose(1, 2).float(), 2, dim=-1),
                    dim=-1))
    x_out = torch.view_as_real(x_ * freqs_cis).type_as(x)
    x_out = torch.cat(torch.chunk(x_out, 2, dim=-1), dim=-2)
    x_out = x_out.reshape(x_out.shape[0], x_out.shape[1], x_out.shape[2],
                          -1).transpose(1, 2)
    return x_out


def apply_rope(x, positions, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    freqs_cis = precompute_freqs_cis(d, 8192 * 2, theta=base).to(x.device)
    freqs_cis = freqs_cis.index_select(0, positions)
    # boundary: (..., T, d) -> the author's (batch, seq, heads, head_dim) and back
    x4 = x.reshape(-1, 1, T, d).transpose(1, 2)
    out = apply_rotary_emb(x4, freqs_cis)
    return out.transpose(1, 2).reshape(x.shape)
