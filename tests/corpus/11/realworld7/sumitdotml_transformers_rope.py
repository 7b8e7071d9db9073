# expect: rope_pairing
# also: runtime_error
# bug-lines: 49, 50, 53, 61, 62, 71, 72
# source: sumitdotml/transformers @f8464dbac2a81ea33eaefb42681dfaa90f023e15, llama/llama2/model.py (RoPE.RoPEFrequencyCache, RoPE.apply_rope, RoPE.forward)
# changes: the contract's apply_rope(x, positions, base=10000.0) replaces RoPE.forward(x, offset): the angles are computed
#          from the given positions instead of a precomputed arange(max_seq_len) cache sliced at offset (so __init__, the
#          max_seq_len bounds check and the cache move to x.device are gone; the frequencies are created on x.device as the
#          cache was moved there); the static helpers stay on the RoPE class; rotate_half (unused) dropped.
from typing import Tuple
import torch
import torch.nn as nn


class RoPE(nn.Module):
    @staticmethod
    def RoPEFrequencyCache(
        d_model: int, positions: torch.Tensor, base: float, device: torch.device
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        d = d_model // 2
        # Calculating theta_j = 1.0 / (base ** (2j / d_model)) for j = 0..d-1
        indices_j = torch.arange(
            0, d, dtype=torch.float32, device=device
        )  # Shape: (d,)
        theta = 1.0 / (base ** ((2 * indices_j) / d_model))  # Shape: (d,)

        # Creating position indices m
        position_indices_m = positions.to(device=device, dtype=torch.float32)  # Shape: (seq_len,)

        # Calculating angles m * theta_j using broadcasting
        # angles shape: (seq_len, 1) * (1, d) -> (seq_len, d)
        angles = position_indices_m[:, None] * theta[None, :]  # Shape: (seq_len, d)

        cos_cached = torch.cos(angles)  # Shape: (seq_len, d)
        sin_cached = torch.sin(angles)  # Shape: (seq_len, d)

        return cos_cached, sin_cached

    @staticmethod
    def apply_rope(
        x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> torch.Tensor:
        # cos/sin inputs have shape (seq_len, d_half)
        # We need to unsqueeze them to broadcast correctly with x
        # x typically has shape (batch, seq_len, ...) e.g. (batch, seq_len, dim) or (batch, seq_len, heads, dim)
        # We want cos/sin to broadcast along all dims except seq_len (dim 1) and the feature dim (last dim)
        # Target shape for cos/sin (before cat): (1, seq_len, 1, ..., 1, d_half)

        # Adding a singleton dim for batch
        cos = cos.unsqueeze(0)
        sin = sin.unsqueeze(0)

        # Adding singleton dims for any dimensions between seq_len and the final feature dim
        if x.ndim > 3:
            num_intermediate_dims = x.ndim - 3
            for _ in range(num_intermediate_dims):
                cos = cos.unsqueeze(-2)  # Add dim before the last one (d_half)
                sin = sin.unsqueeze(-2)

        # Using the standard RoPE implementation method directly
        # Splitting the input tensor into even and odd dimensions along the last dimension
        x_even = x[..., 0::2]  # Shape: (batch, seq_len, ..., d/2)
        x_odd = x[..., 1::2]  # Shape: (batch, seq_len, ..., d/2)

        # Applying rotation to even and odd dimensions separately
        # The broadcast of cos/sin already handles the sequence dimension correct alignment
        x_rotated_even = x_even * cos - x_odd * sin
        x_rotated_odd = x_even * sin + x_odd * cos

        # Interleaving (i.e., merging) the dimensions again
        x_rotated = torch.empty_like(x)
        x_rotated[..., 0::2] = x_rotated_even
        x_rotated[..., 1::2] = x_rotated_odd

        return x_rotated


def apply_rope(x, positions, base=10000.0):
    cos_values, sin_values = RoPE.RoPEFrequencyCache(x.shape[-1], positions, base, device=x.device)
    # Applying RoPE using the static helper method
    return RoPE.apply_rope(x, cos_values, sin_values)
