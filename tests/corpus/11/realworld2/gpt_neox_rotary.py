# expect: pass
# source: EleutherAI/gpt-neox/megatron/model/positional_embeddings.py, class RotaryEmbedding and rotate_half, with the
#         rotation formula of apply_rotary_pos_emb_torch (https://github.com/EleutherAI/gpt-neox/blob/ea7aefd8f8e183256992d9fede4d7c71a46d67a5/megatron/model/positional_embeddings.py)
# license: Apache-2.0
# changes: a function apply_rope(x, positions, base=10000.0) gives the contract's call: it builds the author's
#          RotaryEmbedding(d, max_seq_len=max(positions) + 1, base=base, precision=x.dtype) (gpt-neox passes
#          precision=params_dtype, the dtype of the activations), takes its full cos/sin cache and picks the rows of
#          `positions` (the author slices rows offset..offset+T of a seq-first (sq, 1, 1, d) cache; the contract's x is
#          (..., T, d) and positions need not be contiguous), then applies apply_rotary_pos_emb_torch's formula
#          (x * cos) + (rotate_half(x) * sin) to x alone. The unused get_emb() (it calls .cuda()) is dropped.
import torch


class RotaryEmbedding(torch.nn.Module):
    def __init__(
        self, dim, max_seq_len, base=10000, precision=torch.half, save_inv_freqs=False
    ):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=save_inv_freqs)
        self.seq_len_cached = None
        self.cos_cached = None
        self.sin_cached = None
        self.precision = precision
        self.max_seq_len = max_seq_len
        self.base = base
        self.dim = dim

        # precompute cos_cached, sin_cached in fp32
        cos_cached, sin_cached, inv_freq = self._prepare_cache(
            max_seq_len, precision, base
        )

        self.register_buffer("inv_freq", inv_freq, persistent=save_inv_freqs)
        self.cos_cached = cos_cached
        self.sin_cached = sin_cached

    def _prepare_cache(self, seq_len, precision, base):
        # precompute cos_cached, sin_cached in fp32
        inv_freq = 1.0 / (base ** (torch.arange(0, self.dim, 2).float() / self.dim))

        t = torch.arange(seq_len).type_as(inv_freq)
        freqs = torch.einsum("i,j->ij", t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)

        self.emb = emb.reshape(emb.size(0), 1, 1, emb.size(1))

        cos_cached = emb.cos()[:, None, None, :]
        sin_cached = emb.sin()[:, None, None, :]

        return (
            cos_cached.to(precision),
            sin_cached.to(precision),
            inv_freq.to(precision),
        )

    def forward(self, x, seq_dim=0, seq_len=None):
        if seq_len is None:
            seq_len = x.shape[seq_dim]

        assert seq_len <= self.max_seq_len

        if seq_len != self.max_seq_len:
            # y, z, _ = self._prepare_cache(seq_len, self.precision, self.base)
            return (
                self.cos_cached[:seq_len, ...].to(x.device),
                self.sin_cached[:seq_len, ...].to(x.device),
            )
        else:
            return self.cos_cached.to(x.device), self.sin_cached.to(x.device)


# rotary pos emb helpers:


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat(
        (-x2, x1), dim=x1.ndim - 1
    )  # dim=-1 triggers a bug in earlier torch versions


def apply_rope(x, positions, base=10000.0):
    max_seq_len = int(positions.max()) + 1
    rotary_emb = RotaryEmbedding(x.shape[-1], max_seq_len, base=base, precision=x.dtype)
    cos, sin = rotary_emb(x, seq_len=max_seq_len)
    cos, sin = cos[positions, 0, 0, :], sin[positions, 0, 0, :]
    return (x * cos) + (rotate_half(x) * sin)
