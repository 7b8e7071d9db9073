# expect: pass
# adapted from: huggingface/transformers/src/transformers/models/llama/modeling_llama.py, LlamaRotaryEmbedding:
#   _set_cos_sin_cache (a cos/sin table for positions 0 .. seq_len - 1, rows picked by position_ids) and
#   _dynamic_frequency_update (seq_len = torch.max(position_ids) + 1); license Apache-2.0.
# changes: apply_rope(x, positions, base) (contract) builds the table for int(positions.max()) + 1 positions on
#   x's device, then gathers the rows of the given positions; half-split pairs as the contract asks. The int(...) is
#   a host sync: fine on a GPU, impossible on the meta device (the grader used to reject this file as tensor_on_cpu).
import torch


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def cos_sin_table(length, dim, base, device):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    t = torch.arange(length, device=device, dtype=torch.float64)
    freqs = torch.outer(t, inv_freq)  # (length, dim / 2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (length, dim): the same angle for x[i] and x[i + dim / 2]
    return emb.cos(), emb.sin()


def apply_rope(x, positions, base=10000.0):
    length = int(positions.max()) + 1  # the table covers every position asked for
    cos, sin = cos_sin_table(length, x.shape[-1], base, x.device)
    cos, sin = cos[positions].to(x.dtype), sin[positions].to(x.dtype)  # (T, d), broadcast over batch and heads
    return x * cos + rotate_half(x) * sin
