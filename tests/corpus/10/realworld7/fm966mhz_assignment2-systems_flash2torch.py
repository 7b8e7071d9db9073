# expect: runtime_error
# also: mask_missing
# bug-lines: 35, 42, 46, 47, 52, 53, 54, 72, 97, 130, 133, 134, 135
# source: fm966mhz/assignment2-systems @dcbcded9c20aa85494fa1c5e554bbe359c28e8b4, cs336_systems/pytorch_functions.py (FlashAttention2Torch)
# changes: entry point tiled_attention(query, key, value, causal=False, block_size=64) added, calling
#          FlashAttention2Torch.apply with q_tile_size = k_tile_size = block_size (contract); einops and numpy (not allowed
#          imports) replaced by the equivalent torch.einsum / amax / sum calls and math.sqrt; jaxtyping annotations and
#          docstrings dropped; torch.compile(_backward_impl) (refused by the grader's policy) replaced by a direct call.
import math

import torch


class FlashAttention2Torch(torch.autograd.Function):
    """PyTorch implementation of FlashAttention2."""

    @staticmethod
    def forward(
        ctx,
        Q,
        K,
        V,
        is_causal: bool = False,
        q_tile_size: int = 16,
        k_tile_size: int = 16,
    ):
        input_batch_shape = Q.shape[:-2]
        assert (
            K.shape[:-2] == input_batch_shape
        ), f"K batch shape {K.shape[:-2]} mismatch with Q {input_batch_shape}"
        assert (
            V.shape[:-2] == input_batch_shape
        ), f"V batch shape {V.shape[:-2]} mismatch with Q {input_batch_shape}"
        assert (
            K.shape == V.shape
        ), f"Mismatch shape between K ({K.shape}) and V ({V.shape})"
        S = Q.shape[-2]
        T = K.shape[-2]
        D = Q.shape[-1]
        Q = Q.view((-1, S, D))
        K = K.view((-1, T, D))
        V = V.view((-1, T, D))
        sqrt_D = math.sqrt(D)
        num_tiles_q = math.ceil(S / q_tile_size)
        num_tiles_kv = math.ceil(T / k_tile_size)
        O = torch.empty_like(Q)
        L = torch.empty(Q.shape[:-1])
        for s in range(num_tiles_q):
            q_s = Q[
                :, s * q_tile_size : min(S, (s + 1) * q_tile_size), :
            ]
            o_s = torch.zeros_like(q_s)
            l_s = torch.zeros(q_s.shape[:-1])
            m_s = -1.0e6 * torch.ones(
                q_s.shape[:-1]
            )
            for t in range(num_tiles_kv):
                k_t = K[
                    :, t * k_tile_size : (t + 1) * k_tile_size, :
                ]
                v_t = V[
                    :, t * k_tile_size : (t + 1) * k_tile_size, :
                ]
                S_st = (
                    torch.einsum(
                        "bqd,bkd->bqk",
                        q_s,
                        k_t,
                    )
                    / sqrt_D
                )
                m_s_old = m_s.clone().detach()
                m_s = torch.maximum(
                    m_s,
                    S_st.amax(dim=-1),
                )
                m_s_diff = m_s - m_s_old
                P_tilde_st = torch.exp(S_st - m_s.unsqueeze(dim=-1))
                l_s = P_tilde_st.sum(dim=-1) + l_s * torch.exp(-m_s_diff)
                o_s = torch.einsum(
                    "bqk,bkd->bqd",
                    P_tilde_st,
                    v_t,
                ) + torch.einsum(
                    "bq,bqd->bqd",
                    torch.exp(-m_s_diff),
                    o_s,
                )
            O[:, s * q_tile_size : (s + 1) * q_tile_size, :] = torch.einsum(
                "bq,bqd->bqd",
                1.0 / l_s,
                o_s,
            )
            L[:, s * q_tile_size : (s + 1) * q_tile_size] = m_s + torch.log(l_s)
        ctx.save_for_backward(O, L, Q, K, V)
        ctx.is_causal = is_causal  # type: ignore
        return O.view(input_batch_shape + (S, D))

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Backward pass."""
        (dO,) = grad_outputs
        O, L, Q, K, V = ctx.saved_tensors  # type: ignore
        input_batch_shape = dO.shape[:-2]
        S, D = dO.shape[-2:]
        T = K.shape[-2]
        dO = dO.view((-1, S, D))

        def _backward_impl(dO, O, L, Q, K, V, sqrt_d: float, is_causal: bool = False):
            S = torch.einsum("bsd,btd->bst", Q, K) / sqrt_d
            q_seq_len, k_seq_len = S.shape[-2:]
            # Let S' = S + causal_mask, we have dS' = dS, so we only need to update S for the
            # situations with `is_causal = True`.
            if is_causal:
                S = torch.where(
                    torch.arange(q_seq_len, device=S.device)[None, :, None]
                    >= torch.arange(k_seq_len, device=S.device)[None, None, :],
                    S,
                    -1e6,
                )
            P = torch.exp(S - L.unsqueeze(dim=-1))
            dV = torch.einsum("bst,bsd->btd", P, dO)
            dP = torch.einsum("bsd,btd->bst", dO, V)
            dS = P * (dP - (O * dO).sum(dim=-1, keepdim=True))
            dQ = torch.einsum("bst,btd->bsd", dS, K) / sqrt_d
            dK = torch.einsum("bst,bsd->btd", dS, Q) / sqrt_d
            return dQ, dK, dV

        dQ, dK, dV = _backward_impl(
            dO, O, L, Q, K, V, math.sqrt(D), ctx.is_causal  # type:ignore
        )
        return (
            dQ.view(input_batch_shape + (S, D)),
            dK.view(input_batch_shape + (T, D)),
            dV.view(input_batch_shape + (T, D)),
            None,
            None,
            None,
        )


def tiled_attention(query, key, value, causal=False, block_size=64):
    return FlashAttention2Torch.apply(query, key, value, causal, block_size, block_size)
