# expect: masked_rows_nan
# bug-lines: 26
# source: Alexander-Nestor-Bergmann/pytorch-transformer-demo @ed7097e462bfea6b0c8320b9a8d3a32d3e7f5537, src/transformer/attention.py (scaled_dot_product_attention) + src/transformer/masks.py (create_padding_mask, create_subsequent_mask)
# changes: entry point padded_attention(query, key, value, key_padding_mask=None, causal=False) added (contract);
#          create_padding_mask takes the contract's bool (B, S) mask instead of token ids + pad_idx; the two masks
#          are combined with | as the author's masks.py recommends; the Tensor/Optional type hints and docstrings trimmed.
import math
import torch
from torch import Tensor
from typing import Optional


def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Optional[Tensor] = None
) -> Tensor:
    d_k = query.size(-1)
    # scores shape: (batch_size, num_heads, seq_len_q, seq_len_k)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)

    if mask is not None:
        # Mask shape needs to be broadcastable to scores shape
        # Where mask is True, fill with -inf
        scores = scores.masked_fill(mask, float("-inf"))

    # attn_weights shape: (batch_size, num_heads, seq_len_q, seq_len_k)
    attn_weights = torch.softmax(scores, dim=-1)

    # output shape: (batch_size, num_heads, seq_len_q, d_v)
    output = torch.matmul(attn_weights, value)
    return output


def create_padding_mask(key_padding_mask: torch.Tensor) -> torch.Tensor:
    # True for positions that should be masked (padding), False otherwise.
    mask = key_padding_mask
    # Add dimensions for multi-head attention compatibility (batch_size, n_heads, seq_len_q, seq_len_k)
    return mask.unsqueeze(1).unsqueeze(2)  # shape: (batch_size, 1, 1, seq_len)


def create_subsequent_mask(
    size: int, device: torch.device = torch.device("cpu")
) -> torch.Tensor:
    # Create an upper triangular matrix of ones
    mask = torch.triu(torch.ones(size, size, device=device), diagonal=1)
    # Convert to boolean: True where it's 1 (upper triangle), False where it's 0
    return mask.bool().unsqueeze(0).unsqueeze(1)


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    mask = None
    if key_padding_mask is not None:
        mask = create_padding_mask(key_padding_mask)
    if causal:
        subsequent_mask = create_subsequent_mask(query.size(-2), device=query.device)
        mask = subsequent_mask if mask is None else (mask | subsequent_mask)
    return scaled_dot_product_attention(query, key, value, mask=mask)
