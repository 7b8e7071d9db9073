# attack: ask for a terabyte of memory, then keep a list of 100 MB blocks growing -> fail (memory_limit)
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    hog = [torch.empty(1 << 40, dtype=torch.uint8)]
    while True:
        hog.append(torch.ones(100 << 20, dtype=torch.uint8))
