# expect: pass
# relabelled pass by the integrator: issue 12 defines float32 angles (Hugging Face, Meta, rasbt) as correct; only fp16/bf16 angles are rope_angle_precision
# source: huggingface/transformers/src/transformers/models/llama/modeling_llama.py, LlamaRotaryEmbedding.forward +
#   rotate_half + apply_rotary_pos_emb (commit 0022728)
# license: Apache-2.0
# changes: apply_rope(x, positions, base) (contract) = LlamaRotaryEmbedding(dim=d, base=base).forward(x, position_ids)
#   with position_ids = positions[None] (batch of one, broadcast like the author's unsqueeze_dim), then the q half of
#   apply_rotary_pos_emb; the inv_freq buffer is computed in the function (on x's device) since there is no module;
#   the autocast guard is dropped (no autocast in the grader). Half-split pairs; inv_freq and angles in float32
#   as written ("Force float32 since bfloat16 loses precision on long contexts").
import torch


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float().to(x.device) / dim))
    position_ids = positions[None, :]

    # LlamaRotaryEmbedding.forward
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(dtype=x.dtype)
    sin = emb.sin().to(dtype=x.dtype)

    # apply_rotary_pos_emb (query half); cos/sin are (1, T, d) and broadcast over the leading dims
    cos = cos[0]
    sin = sin[0]
    q_embed = (x * cos) + (rotate_half(x) * sin)
    return q_embed
