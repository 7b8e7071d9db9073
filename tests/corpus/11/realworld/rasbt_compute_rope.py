# expect: pass
# relabelled pass by the integrator: issue 12 defines float32 angles (Hugging Face, Meta, rasbt) as correct; only fp16/bf16 angles are rope_angle_precision
# source: rasbt/LLMs-from-scratch/ch05/07_gpt_to_llama/converting-gpt-to-llama2.ipynb, precompute_rope_params +
#   compute_rope (commit 28c65cdfbc3338e2e040016eea4b7fdf556e4d57)
# license: Apache-2.0
# changes: apply_rope(x, positions, base) (contract) = precompute_rope_params(head_dim=d, theta_base=base,
#   positions=the contract's positions) -- the author's table is built for arange(context_length) and sliced
#   [:seq_len] in compute_rope, so building it for the given positions and not slicing is the same table row for
#   row (slicing would ignore the positions); inv_freq moved to the positions' device; the (batch, heads, seq, dim)
#   unpacking and unsqueezes are replaced by broadcasting over the contract's (..., T, d) layout.
#   Half-split pairs and float32 angles as written.
import torch


def precompute_rope_params(head_dim, theta_base=10_000, positions=None):
    assert head_dim % 2 == 0, "Embedding dimension must be even"

    # Compute the inverse frequencies
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2)[: (head_dim // 2)].float() / head_dim))

    inv_freq = inv_freq.to(positions.device)

    # Compute the angles
    angles = positions.unsqueeze(1) * inv_freq.unsqueeze(0)  # Shape: (context_length, head_dim // 2)

    # Expand angles to match the head_dim
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)

    # Precompute sine and cosine
    cos = torch.cos(angles)
    sin = torch.sin(angles)

    return cos, sin


def compute_rope(x, cos, sin):
    head_dim = x.shape[-1]
    assert head_dim % 2 == 0, "Head dimension must be even"

    # Split x into first half and second half
    x1 = x[..., : head_dim // 2]  # First half
    x2 = x[..., head_dim // 2 :]  # Second half

    # Adjust sin and cos shapes
    # (seq_len, head_dim), one row per position; broadcasts over the leading dims

    # Apply the rotary transformation
    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)

    return x_rotated.to(dtype=x.dtype)


def apply_rope(x, positions, base=10000.0):
    cos, sin = precompute_rope_params(x.shape[-1], theta_base=base, positions=positions)
    return compute_rope(x, cos, sin)
