# expect: runtime_error
# source: ezhoureal/assignment2-systems/cs336_systems/flash_attention.py, class FlashAttentionPy (a Stanford CS336
#         assignment 2 solution) (https://github.com/ezhoureal/assignment2-systems/blob/d34c2d6d54909a5671fad9802b20ca53c060ab59/cs336_systems/flash_attention.py)
# license: none stated in the repository (no LICENSE file)
# changes: einops is not an allowed import: einops.einsum(a, b, "... b_q d, ... b_k d -> ... b_q b_k") and the other
#          three become torch.einsum with one-letter axes ("...qd,...kd->...qk", ...); the Triton kernels and imports
#          after the class are dropped. tiled_attention(query, key, value, causal=False, block_size=64) gives the
#          contract's call through FlashAttentionPy.apply(query, key, value, causal). The author's tile size is the
#          module constant TILE_SIZE = 16, kept (block_size is unused), as are is_causal (accepted, never used),
#          assert Q.shape == K.shape, O = torch.zeros_like(Q) and the in-place updates.
# bug-lines: 23, 48
import torch

TILE_SIZE: int = 16

class FlashAttentionPy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, is_causal=False):
        DEVICE = Q.device
        num_tiles = Q.shape[-2] // TILE_SIZE
        scale = Q.shape[-1] ** -0.5
        assert Q.shape == K.shape
        O = torch.zeros_like(Q)
        L = torch.zeros(*Q.shape[:-1], device=DEVICE) # logsumexp, N_q

        row = zip(
            torch.split(Q, TILE_SIZE, dim=-2),
            O.split(TILE_SIZE, dim=-2),
            L.split(TILE_SIZE, dim=-1),
        )
        for i, (q, o, l) in enumerate(row):
            m = torch.full(l.shape, float('-inf'), device=DEVICE)
            col = zip(
                K.split(TILE_SIZE, dim=-2),
                V.split(TILE_SIZE, dim=-2)
            )
            for j, (k, v) in enumerate(col):
                attn = torch.einsum("...qd,...kd->...qk", q, k) * scale
                block_row_max = torch.amax(attn, dim=-1)
                new_m = torch.maximum(m, block_row_max)
                attn = torch.exp(attn - new_m.unsqueeze(-1))
                assert new_m.shape == m.shape, new_m.shape
                m_diff = torch.exp(m - new_m)
                l.mul_(m_diff)
                l.add_(torch.sum(attn, dim=-1))
                m.copy_(new_m)
                o.mul_(m_diff.unsqueeze(-1))
                o.add_(torch.einsum("...qk,...kd->...qd", attn, v))
            o.div_(l.unsqueeze(-1))
            l.copy_(m + torch.log(l))

        ctx.save_for_backward(Q, K, V, O, L)
        return O

    @staticmethod
    def backward(ctx, grad_outputs):
        print(f'grad shape = {grad_outputs.shape}')
        dO = grad_outputs
        Q, K, V, O, L = ctx.saved_tensors
        D = torch.sum(dO * O, dim=-1, keepdim=True) # (... b_q d)
        scale = Q.shape[-1] ** -0.5
        S = torch.einsum("...qd,...kd->...qk", Q, K) * scale
        P = torch.exp(S - L.unsqueeze(-1))
        assert P.shape == S.shape
        dV = torch.einsum("...qk,...qd->...kd", P, dO)
        dP = torch.einsum("...qd,...kd->...qk", dO, V)
        dS = P * (dP - D)
        assert dS.shape == S.shape, f"dS shape mismatch: {dS.shape} != {S.shape}"
        dQ = torch.einsum("...qk,...kd->...qd", dS, K) * scale
        dK = torch.einsum("...qk,...qd->...kd", dS, Q) * scale
        return dQ, dK, dV, None


def tiled_attention(query, key, value, causal=False, block_size=64):
    return FlashAttentionPy.apply(query, key, value, causal)
