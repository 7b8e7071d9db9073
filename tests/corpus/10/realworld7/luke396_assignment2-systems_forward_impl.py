# expect: runtime_error
# also: tiled_remainder_dropped
# bug-lines: 18, 20, 26, 44, 45
# source: luke396/assignment2-systems @24c85d16a1ee12b18fd9c46e9853fceaed6f7595, cs336_systems/attention_triton.py (_forward_impl, AttentionTorch.forward)
# changes: _forward_impl is called from the contract's tiled_attention(query, key, value, causal=False, block_size=64) with
#          q_tile_size = kv_tile_size = block_size, returning o only (AttentionTorch.forward's ctx lines and the Triton
#          kernels dropped: triton is not an allowed import); the @torch.compile decorator removed (not allowed by the
#          grader's policy); the noqa comments kept.
import math

import torch


def _forward_impl(Q, K, V, is_causal, q_tile_size, kv_tile_size):
    seq, d = Q.size(-2), Q.size(-1)
    scale = 1 / math.sqrt(d)
    num_q_tiles = math.ceil(seq / q_tile_size)
    num_kv_tiles = math.ceil(seq / kv_tile_size)

    o = Q.new_zeros(Q.size())  # (seq_len, d)
    l = Q.new_zeros(Q.shape[:-1])  # (seq_len)  # noqa: E741

    for i in range(num_q_tiles):
        q_start, q_end = i * q_tile_size, (i + 1) * q_tile_size
        tile_q = Q[..., q_start:q_end, :]  # (b_q, d)
        o_i = tile_q.new_zeros(tile_q.size())  # (b_q, d)
        l_i = tile_q.new_zeros(tile_q.shape[:-1])  # (b_q,)
        m_i = tile_q.new_full(tile_q.shape[:-1], float("-inf"))  # (b_q,)

        max_kv_tiles = (
            math.ceil((i + 1) * q_tile_size / kv_tile_size)
            if is_causal
            else num_kv_tiles
        )
        for j in range(max_kv_tiles):
            kv_start = j * kv_tile_size
            kv_end = (j + 1) * kv_tile_size
            tile_k = K[..., kv_start:kv_end, :]  # (b_k, d)
            tile_v = V[..., kv_start:kv_end, :]  # (b_k, d)

            s_ij = tile_q @ tile_k.transpose(-2, -1) * scale

            if is_causal:
                q_indices = torch.arange(q_start, q_end, device=Q.device)
                k_indices = torch.arange(kv_start, kv_end, device=Q.device)
                causal_mask = q_indices[:, None] < k_indices[None, :]
                s_ij = s_ij.masked_fill(causal_mask, float("-inf"))
            m_i_prev = m_i
            m_i = torch.maximum(m_i_prev, s_ij.max(dim=-1).values)
            p_ij = torch.exp(s_ij - m_i[..., None])
            alpha = torch.exp(m_i_prev - m_i)
            l_i = alpha * l_i + p_ij.sum(dim=-1)
            o_i = alpha[..., None] * o_i + p_ij @ tile_v
        o_i = o_i / l_i[..., None]
        l_i = m_i + torch.log(l_i)
        o[..., q_start:q_end, :] = o_i
        l[..., q_start:q_end] = l_i

    return o, l


def tiled_attention(query, key, value, causal=False, block_size=64):
    o, l = _forward_impl(  # noqa: E741
        query,
        key,
        value,
        causal,
        block_size,
        block_size,
    )
    return o
