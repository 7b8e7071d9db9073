# expect: runtime_error
# bug-lines: 21, 28
# source: ShibukiZero/assignment2-systems @00f372456e92f9c80d50de68240ed079eefdad88, cs336_systems/flash_attention.py (_flash_attention_forward_pytorch_tiled)
# changes: function tiled_attention(query, key, value, causal, block_size) with q_tile_size = k_tile_size = block_size; (B, H, L, d) inputs indexed on dim 2 instead of the author's (batch, seq, d) dim 1, einops einsum/reduce written as torch.einsum/amax/sum; the input validator (3-D only) and the logsumexp output removed (not in the contract); returns the output only
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    q, k, v = query, key, value
    q_tile_size = k_tile_size = block_size
    is_causal = causal

    n_queries = q.shape[-2]
    n_keys = k.shape[-2]
    scale = q.shape[-1] ** -0.5
    num_query_tiles = math.ceil(n_queries / q_tile_size)
    num_key_tiles = math.ceil(n_keys / k_tile_size)

    output = torch.zeros_like(q)

    for query_tile_idx in range(num_query_tiles):
        q_start = query_tile_idx * q_tile_size
        q_end = min((query_tile_idx + 1) * q_tile_size, n_queries)
        q_tile = q[:, :, q_start:q_end, :]

        running_output = torch.zeros_like(q_tile)
        running_l = torch.zeros(q_tile.shape[:-1], dtype=q.dtype, device=q.device)
        running_m = torch.full(q_tile.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)

        for key_tile_idx in range(num_key_tiles):
            k_start = key_tile_idx * k_tile_size
            k_end = min((key_tile_idx + 1) * k_tile_size, n_keys)
            k_tile = k[:, :, k_start:k_end, :]
            v_tile = v[:, :, k_start:k_end, :]

            scores_tile = torch.einsum("...qd,...kd->...qk", q_tile, k_tile) * scale
            if is_causal:
                query_positions = torch.arange(q_start, q_end, device=q.device)
                key_positions = torch.arange(k_start, k_end, device=q.device)
                causal_mask = query_positions[:, None] >= key_positions[None, :]
                scores_tile = torch.where(
                    causal_mask.unsqueeze(0),
                    scores_tile,
                    scores_tile.new_full((), -1e6),
                )

            prev_running_m = running_m
            running_m = torch.maximum(running_m, scores_tile.amax(dim=-1))
            unnormalized_probs = torch.exp(scores_tile - running_m.unsqueeze(-1))
            running_l = (
                torch.exp(prev_running_m - running_m) * running_l
                + unnormalized_probs.sum(dim=-1)
            )

            # Rescale the previous partial output before accumulating the new key/value tile.
            running_output = (
                running_output * torch.exp(prev_running_m - running_m).unsqueeze(-1)
                + torch.einsum("...qk,...kd->...qd", unnormalized_probs, v_tile)
            )

        output[:, :, q_start:q_end, :] = running_output / running_l.unsqueeze(-1)

    return output
