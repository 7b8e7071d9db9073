# expect: runtime_error
# bug-lines: 33, 34, 37
# source: hyunwoongko/transformer @09c74b80162ac571584ca29379236e95453fe43b, models/layers/scale_dot_product_attention.py (ScaleDotProductAttention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   module kept; a contract function scaled_dot_product_attention(query, key, value, mask=None) calls it and passes ~mask, since the author
#   masks where mask == 0 (1 = attend) and the contract's mask is True = blocked; the unused `e` default kept
"""
@author : Hyunwoong
@when : 2019-10-22
@homepage : https://github.com/gusdnd852
"""
import math

from torch import nn


class ScaleDotProductAttention(nn.Module):
    """
    compute scale dot product attention

    Query : given sentence that we focused on (decoder)
    Key : every sentence to check relationship with Qeury(encoder)
    Value : every sentence same with Key (encoder)
    """

    def __init__(self):
        super(ScaleDotProductAttention, self).__init__()
        self.softmax = nn.Softmax()

    def forward(self, q, k, v, mask=None, e=1e-12):
        # input is 4 dimension tensor
        # [batch_size, head, length, d_tensor]
        batch_size, head, length, d_tensor = k.size()
        d_model = head * d_tensor

        # 1. dot product Query with Key^T to compute similarity
        k_t = k.view(batch_size, head, d_tensor, length)
        score = (q @ k_t) / math.sqrt(d_model)

        # 2. apply masking (opt)
        if mask is not None: score = score.masked_fill(mask == 0, -e)

        # 3. pass them softmax to make [0, 1] range
        score = self.softmax(score)

        # 4. multiply with Value
        v = score @ v

        return v, score


def scaled_dot_product_attention(query, key, value, mask=None):
    # adapter: the author's mask is 1 = attend (masked_fill(mask == 0, ...)); the contract's is True = blocked
    keep = None if mask is None else ~mask
    return ScaleDotProductAttention()(query, key, value, keep)
