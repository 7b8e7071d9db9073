# expect: runtime_error
# also: tiled_remainder_dropped, mask_missing
# bug-lines: 18, 19
# source: damek/cs336-assignment2-systems @045fed177ff9309fbf9d2db9587e700abba83f94, cs336_systems/flashattention.py (FlashAttentionPytorch)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   einops.einsum -> @ and broadcasting (einops not allowed); the hard-coded tile size 16 -> the contract's block_size (one more forward
#   argument, so backward returns one more None); a contract function folds (B, H) into the author's batch axis and calls .apply
import math

import torch


class FlashAttentionPytorch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q : torch.Tensor ,K : torch.Tensor,V : torch.Tensor, is_causal=False, block_size=16):
        B_q = B_k = block_size
        # B_k = 1
        T_q = math.ceil(Q.shape[-2] // B_q)
        T_k = math.ceil(K.shape[-2] // B_k)
        print(K.shape)
        d = Q.shape[-1]
        device = "cpu"
        O_i = torch.empty(*Q.shape[:-2],B_q, d, device= device)
        O = torch.empty(Q.shape, device=device)
        L = torch.empty(Q.shape[:-1], device=device)
        l_i = torch.empty(*Q.shape[:-2], B_q, device = device)
        m_i = torch.empty(*Q.shape[:-2], B_q, device = device)
        sqrt_d = math.sqrt(d)
        for i in range(T_q):
            offset_i = i*B_q
            Q_i = Q[:,offset_i:offset_i + B_q, :]
            O_i.zero_()
            l_i.zero_()
            m_i.fill_(float('-inf'))
            for j in range(T_k):
                offset_j = j*B_k
                K_j = K[:,offset_j:offset_j + B_k, :]
                V_j = V[:,offset_j:offset_j + B_k, :]
                S = (Q_i @ K_j.transpose(-2, -1))/sqrt_d
                m_i_new = torch.max(m_i, torch.max(S, dim = -1)[0])
                tildeP = torch.exp(S - m_i_new.unsqueeze(-1))
                l_i = torch.exp(m_i - m_i_new)*l_i + torch.sum(tildeP, dim=-1)
                O_i = torch.exp(m_i - m_i_new)[..., None] * O_i
                O_i += tildeP @ V_j
                m_i = m_i_new
            O_i = l_i.reciprocal()[..., None] * O_i
            O[:, offset_i:offset_i + B_q,:] = O_i
            L[:, offset_i:offset_i + B_q] = m_i + torch.log(l_i)
        ctx.save_for_backward(Q,K,V,L,O)
        ctx.is_causal = is_causal
        ctx.B_q = B_q
        ctx.B_k = B_k
        ctx.sqrt_d = sqrt_d
        ctx.T_q = T_q
        ctx.T_k = T_k
        ctx.d = d
        return O

    def backward(ctx, dO):
        Q,K,V,L,O = ctx.saved_tensors
        D = (O * dO).sum(dim=-1, keepdim=True)
        S = (Q @ K.transpose(-2, -1))/ctx.sqrt_d
        P = torch.exp(S - L.unsqueeze(-1))
        dV = P.transpose(-2, -1) @ dO
        dP = dO @ V.transpose(-2, -1)
        dS = P * (dP - D)
        dQ = (dS @ K)/ctx.sqrt_d
        dK = (dS.transpose(-2, -1) @ Q)/ctx.sqrt_d

        return dQ, dK, dV, None, None


def tiled_attention(query, key, value, causal=False, block_size=64):
    # adapter: the author's function works on (batch, seq, d); the contract's (B, H, L|S, d) is folded to (B*H, seq, d)
    B, H, L, d_k = query.shape
    S, d_v = key.size(-2), value.size(-1)
    out = FlashAttentionPytorch.apply(query.reshape(B * H, L, d_k), key.reshape(B * H, S, d_k),
                                      value.reshape(B * H, S, d_v), causal, block_size)
    return out.reshape(B, H, L, out.size(-1))
