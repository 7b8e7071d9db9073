# expect: rope_angle_precision
# also: output_shape
# bug-lines: 36, 54
# source: xxw1995/my_llama @1b9cbd3049ff28eb9eed9cf3a652fd5ac1f1a50a, my_easy_llama.py (rotate_half, apply_rotary_pos_emb, LlamaRotaryEmbedding)
# changes: function form: LlamaRotaryEmbedding is built on x's device (as the attention layer's module would be after .to(device)) with dim = d and base, called with seq_len = max(positions) + 1 as the attention layer passes kv_seq_len, and apply_rotary_pos_emb gets positions[None] as position_ids (the (bsz, seq) shape its callers pass); one tensor is rotated instead of q and k
import torch
from torch import nn


def rotate_half(x):
   """Rotates half the hidden dims of the input."""
   x1 = x[..., : x.shape[-1] // 2]
   x2 = x[..., x.shape[-1] // 2 :]
   return torch.cat((-x2, x1), dim=-1)

def apply_rotary_pos_emb(q, cos, sin, position_ids):
   cos = cos[position_ids].unsqueeze(1)  # [seq_len, dim] -> [batch_size, 1, seq_len, head_dim]
   sin = sin[position_ids].unsqueeze(1)  # [seq_len, dim] -> [batch_size, 1, seq_len, head_dim]
   q_embed = (q * cos) + (rotate_half(q) * sin)
   return q_embed

class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None):
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base # 10000
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._set_cos_sin_cache(
            seq_len=max_position_embeddings, device=self.inv_freq.device, dtype=torch.get_default_dtype()
        )

    def _set_cos_sin_cache(self, seq_len, device, dtype):
        self.max_seq_len_cached = seq_len
        t = torch.arange(self.max_seq_len_cached, device=device).to(dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(dtype), persistent=False)
        self.register_buffer("sin_cached", emb.sin().to(dtype), persistent=False)

    def forward(self, x, seq_len=None):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len=seq_len, device=x.device, dtype=x.dtype)
        return (
            self.cos_cached[:seq_len].to(dtype=x.dtype),
            self.sin_cached[:seq_len].to(dtype=x.dtype),
        )


def apply_rope(x, positions, base=10000.0):
    rotary_emb = LlamaRotaryEmbedding(x.shape[-1], base=base, device=x.device)
    cos, sin = rotary_emb(x, seq_len=int(positions.max()) + 1)
    return apply_rotary_pos_emb(x, cos, sin, positions[None, :])
