# expect: runtime_error
# bug-lines: 20, 28, 29
# source: sara-kothari/assignment2-systems @486f465c4163fc6ced5adc8a8edfeb7667cce312, cs336_systems/flash_attention.py
#   (FlashAttention2PyTorch.forward)
# changes: the autograd.Function's forward body becomes the contract's function (ctx.save_for_backward / ctx.is_causal
#   dropped; gradients come from autograd through these operations instead of the author's torch.compile'd backward, which
#   needs triton/compile and is not the contract's concern); the tile sizes Bq = Bk = 16 take the contract's block_size;
#   boundary glue: the contract's (B, H, L, d) tensors are folded to the author's 3-D (B*H, L, d), as the author's own
#   flatten() helper does for 4-D inputs, and the result unfolded; einops einsum written as matmul (einops not allowed);
#   the triton kernels below it in the file are not used.
import torch


def _flash_forward(Q, K, V, is_causal=False, block_size=16):

    #Q.shape = B, T, D
    Bq = block_size
    Bk = block_size
    d = Q.shape[-1]
    O = torch.zeros_like(Q)
    #L.shape = BxT 
    L = torch.zeros(*Q.shape[:-2],Q.shape[-2] , device=Q.device, dtype=Q.dtype)
    mask = None
    q_idx = None
    k_idx = None
    for i in range(0, Q.shape[-2], Bq):
        Q_i = Q[:, i:i + Bq, :]
        O_i = torch.zeros_like(Q_i, device=Q.device, dtype=Q.dtype)
        l_i = torch.zeros(*Q.shape[:-2], Bq, device=Q.device, dtype=Q.dtype)
        m_i = torch.ones_like(l_i, device=Q.device, dtype=Q.dtype)*float("-inf")
        for j in range(0, K.shape[-2], Bk):
            
            K_j = K[:, j:j + Bk, :]
            V_j = V[:, j: j+ Bk, :]
            S_ij = (Q_i @ K_j.transpose(-2, -1))/d**0.5
            if is_causal:
                q_idx = torch.arange(start=i,end=i + Bq , step=1, out=None, device=Q.device).unsqueeze(-1)
                k_idx = torch.arange(start=j,end=j + Bk , step=1, out=None, device=Q.device).unsqueeze(0)
                mask = k_idx > q_idx
                S_ij = torch.where(mask, S_ij + -1e6, S_ij)
            prev_m = m_i
            m_i = torch.maximum(m_i, torch.max(S_ij, dim=-1).values)
            P_ij = torch.exp(S_ij - m_i.unsqueeze(-1))
            l_i = torch.exp(prev_m - m_i)*l_i + torch.sum(P_ij, dim=-1)
            O_i = torch.exp(prev_m - m_i).unsqueeze(-1)*O_i + P_ij @ V_j
        O_i = (1/l_i.unsqueeze(-1))*O_i
        L_i = m_i + torch.log(l_i)
        O[:, i:i + Bq, :] = O_i
        L[:, i:i + Bq] = L_i
    return O


def tiled_attention(query, key, value, causal=False, block_size=64):
    # boundary: (B, H, L, d) -> the author's (B*H, L, d) and back
    B, H, L, _ = query.shape
    S = key.shape[2]
    O = _flash_forward(query.reshape(B * H, L, -1), key.reshape(B * H, S, -1), value.reshape(B * H, S, -1),
                       is_causal=causal, block_size=block_size)
    return O.view(B, H, L, -1)
