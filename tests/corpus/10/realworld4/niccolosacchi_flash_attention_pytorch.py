# expect: runtime_error
# also: mask_missing
# bug-lines: 59, 77
# source: NiccoloSacchi/assignment2-systems @167ffb0a2380259d0d69ec199101faf2dd30186c, cs336_systems/flash_attention_pytorch.py
#   (flash_fwd_kernel, PyTorchFlashAttention.forward)
# changes: PyTorchFlashAttention.forward(ctx, Q, K, V, is_causal) becomes the contract's tiled_attention(query, key, value,
#   causal=False, block_size=64): ctx.Q_TILE_SIZE / ctx.K_TILE_SIZE (64) take block_size, ctx.save_for_backward dropped (the
#   author's backward raises NotImplementedError; gradients come from autograd through the forward's operations);
#   einops rearrange "... queries d -> (...) queries d" written as reshape and einops einsum as matmul (einops not allowed);
#   jaxtyping annotations dropped. The author's "Optional: Add causal masking logic here" comment is kept: is_causal is
#   passed to the kernel and never used.
import math
import torch
from torch import Tensor


def flash_fwd_kernel(
    # query_tile_index and batch_index represent the program IDs in a Triton
    # grid.
    query_tile_index: int,
    seq_index: int,
    Q: Tensor,
    K: Tensor,
    V: Tensor,
    is_causal: bool,
    O: Tensor,
    L: Tensor,
    N_KEYS: int,
    softmax_scale: float,
    D: int,
    Q_TILE_SIZE: int,
    K_TILE_SIZE: int,
):
    # Each 'triton program' only processes 1 query tile of 1 sequence.
    Q_seq = Q[seq_index]
    K_seq = K[seq_index]
    V_seq = V[seq_index]

    device, dtype = Q_seq.device, Q_seq.dtype

    # Load the specific Query tile for this program instance
    q_start = query_tile_index * Q_TILE_SIZE
    q_tile = Q_seq[q_start : q_start + Q_TILE_SIZE, :]
    queries_in_tile = q_tile.shape[0]

    # Initialize accumulators in "SRAM" (Registers).
    mi = torch.full((queries_in_tile, 1), float("-inf"), device=device, dtype=dtype)
    li = torch.zeros((queries_in_tile, 1), device=device, dtype=dtype)
    oi = torch.zeros((queries_in_tile, D), device=device, dtype=dtype)

    for k_tile_idx in range(0, N_KEYS, K_TILE_SIZE):
        k_tile = K_seq[k_tile_idx : k_tile_idx + K_TILE_SIZE, :]
        v_tile = V_seq[k_tile_idx : k_tile_idx + K_TILE_SIZE, :]
        s_tile = (
            (q_tile @ k_tile.transpose(-2, -1))
            * softmax_scale
        )

        # Optional: Add causal masking logic here
        mi_new = torch.max(mi, torch.max(s_tile, dim=-1, keepdim=True).values)
        p_tile = torch.exp(s_tile - mi_new)
        alpha = torch.exp(mi - mi_new)
        li = alpha * li + torch.sum(p_tile, dim=-1, keepdim=True)
        oi = alpha * oi + (p_tile @ v_tile)
        mi = mi_new

    # Use same approach as in a triton kernel: use temporary output tensors
    # to hold the final results and write only once HBM to minimize data
    # transfers between HBM and SRAM.
    O[seq_index, q_start : q_start + queries_in_tile, :] = oi / li
    L[seq_index, q_start : q_start + queries_in_tile] = (mi + torch.log(li)).squeeze(-1)


def tiled_attention(query, key, value, causal=False, block_size=64):
    Q, K, V, is_causal = query, key, value, causal
    assert Q.shape[:-2] == K.shape[:-2] == V.shape[:-2], "Batch/Head mismatch"
    assert Q.shape[-1] == K.shape[-1] == V.shape[-1], "Embedding D mismatch"
    assert K.shape[-2] == V.shape[-2], "Sequence length Nk mismatch"

    Q_TILE_SIZE = block_size
    K_TILE_SIZE = block_size

    # Reshape the inputs to 3D tensors to simplify the algorithm.
    Q_flat = Q.reshape(-1, Q.shape[-2], Q.shape[-1])
    K_flat = K.reshape(-1, K.shape[-2], K.shape[-1])
    V_flat = V.reshape(-1, V.shape[-2], V.shape[-1])

    n_sequences, n_queries, d = Q_flat.shape
    n_keys = K_flat.shape[1]
    softmax_scale = 1.0 / math.sqrt(d)

    O_flat = torch.zeros_like(Q_flat)
    L_flat = torch.zeros((n_sequences, n_queries), device=Q.device, dtype=Q.dtype)

    # Launch grid simulation: (#q tiles, #sequences)
    n_q_tiles = math.ceil(n_queries / Q_TILE_SIZE)
    for seq_index in range(n_sequences):
        for query_tile_index in range(n_q_tiles):
            flash_fwd_kernel(
                query_tile_index=query_tile_index,
                seq_index=seq_index,
                Q=Q_flat,
                K=K_flat,
                V=V_flat,
                is_causal=is_causal,
                O=O_flat,
                L=L_flat,
                N_KEYS=n_keys,
                softmax_scale=softmax_scale,
                D=d,
                Q_TILE_SIZE=Q_TILE_SIZE,
                K_TILE_SIZE=K_TILE_SIZE,
            )

    return O_flat.view(Q.shape)
