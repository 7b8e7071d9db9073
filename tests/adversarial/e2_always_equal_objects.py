# attack: return objects whose __eq__ is always true (and that look like tensors) instead of tensors -> fail (tensor)
import torch


class LooksRight:
    def __init__(self, like):
        self.shape = like.shape
        self.dtype = like.dtype

    def __eq__(self, other):
        return True

    def __bool__(self):
        return True


def scaled_dot_product_attention(query, key, value, mask=None):
    fake = torch.zeros(*query.shape[:-1], value.shape[-1], dtype=query.dtype)
    return LooksRight(fake), LooksRight(fake)
