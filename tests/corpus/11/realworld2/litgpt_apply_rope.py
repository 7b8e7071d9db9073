# expect: output_shape
# source: Lightning-AI/litgpt/litgpt/model.py, functions build_rope_cache, batched_index_select and apply_rope (https://github.com/Lightning-AI/litgpt/blob/26857050fe3ff627cd714fe92f5838f51a3d5efa/litgpt/model.py)
# license: Apache-2.0
# changes: the contract's apply_rope(x, positions, base=10000.0) is written as litgpt's GPT.forward feeds its blocks:
#          cos, sin = build_rope_cache(seq_len = max(positions) + 1, n_elem = d, device = x.device, base = base), rows
#          picked with batched_index_select(cos, 0, positions), a leading batch axis added with unsqueeze(0) (apply_rope
#          requires 3-D cos/sin), then litgpt's apply_rope(x, cos, sin) renamed _litgpt_apply_rope. build_rope_cache is
#          trimmed to its default path: the extra_config (Llama 3.1 / YaRN scaling) and rope_local_base_freq branches,
#          unused here, are removed; condense_ratio = 1. batched_index_select keeps only its 1-D index branch.
import torch


def build_rope_cache(
    seq_len: int,
    n_elem: int,
    device: torch.device | None = None,
    base: int = 10000,
    condense_ratio: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    # Compute the inverse frequencies theta
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=device).float() / n_elem))

    # Initialize attention scaling factor (modified for YaRN)
    attention_scaling = 1.0

    # Create position indices `[0, 1, ..., seq_len - 1]`
    seq_idx = torch.arange(seq_len, device=device).float() / condense_ratio

    # Calculate the product of position index and $\theta_i$
    idx_theta = torch.outer(seq_idx, theta).repeat(1, 2)
    # If `n_elem` is odd, the final dimension of `idx_theta` has size
    # `n_elem + 1`, so need to cut something off.
    if idx_theta.shape[-1] > n_elem > 1:
        idx_theta = idx_theta[..., :n_elem]

    cos = torch.cos(idx_theta) * attention_scaling
    sin = torch.sin(idx_theta) * attention_scaling
    return cos, sin


def batched_index_select(t, dim, idx):
    """index_select for batched index and unbatched t"""
    if idx.dim() == 1:
        return torch.index_select(t, dim, idx)
    raise NotImplementedError("only a 1-D index is used here")


def _litgpt_apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    if cos.dim() != 3:
        raise ValueError(f"cos must be three-dimensional, but shape is {cos.shape}")
    if cos.shape != sin.shape:
        raise ValueError(f"cos, sin must have same shape, but cos.shape={cos.shape}, sin.shape={sin.shape}")
    head_size_half = x.size(-1) // 2
    x1 = x[..., :head_size_half]  # (B, ..., T, head_size/2)
    x2 = x[..., head_size_half:]  # (B, ..., T, head_size/2)
    rotated = torch.cat((-x2, x1), dim=-1)  # (B, ..., T, head_size)
    dims_diff = x.dim() - cos.dim()
    if dims_diff > 0:
        # Ensure that shapes of `x`, `cos`, `sin` align
        new_shape = cos.shape[0:1] + (1,) * dims_diff + cos.shape[1:]
        cos = cos.view(*new_shape)
        sin = sin.view(*new_shape)

    roped = (x * cos) + (rotated * sin)
    return roped.to(dtype=x.dtype)


def apply_rope(x, positions, base=10000.0):
    cos, sin = build_rope_cache(int(positions.max()) + 1, x.size(-1), device=x.device, base=base)
    cos = batched_index_select(cos, 0, positions).unsqueeze(0)
    sin = batched_index_select(sin, 0, positions).unsqueeze(0)
    return _litgpt_apply_rope(x, cos, sin)
