# expect: runtime_error
# source: sooftware/attentions/attentions.py, class ScaledDotProductAttention (https://github.com/sooftware/attentions/blob/b1dd65be8f12fbe19525bc4ae0dbbc14975778a7/attentions.py)
# license: MIT (Copyright (c) 2020 KimSooHwan)
# changes: the nn.Module (constructed with `dim`, called as module(query, key, value, mask)) becomes the contract's
#          function scaled_dot_product_attention(query, key, value, mask=None); `self.sqrt_dim = np.sqrt(dim)` becomes
#          a local computed from query.size(-1) with math.sqrt (numpy is not an allowed import; the author's callers
#          pass dim = the query/key size). Everything else (bmm, transpose(1, 2), in-place masked_fill_ with
#          mask.view(score.size())) is the author's.
# bug-lines: 19, 22
import math
import torch
import torch.nn.functional as F
from torch import Tensor
from typing import Optional, Tuple


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    sqrt_dim = math.sqrt(query.size(-1))
    score = torch.bmm(query, key.transpose(1, 2)) / sqrt_dim

    if mask is not None:
        score.masked_fill_(mask.view(score.size()), -float('Inf'))

    attn = F.softmax(score, -1)
    context = torch.bmm(attn, value)
    return context, attn
