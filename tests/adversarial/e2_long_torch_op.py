# attack: one torch call that runs for minutes in C++ (no Python bytecode to interrupt) -> fail (timeout)
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    big = torch.eye(1536, dtype=torch.float64)
    torch.linalg.matrix_power(big, 2**62)  # ~62 dense 1536x1536 products in one call
    return query, query
