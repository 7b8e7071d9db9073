# expect: runtime_error
# also: mask_zero_fill
# bug-lines: 15, 18, 20, 21
# source: PSRahul/Transformer_Learner @4253b279e6830127138ea7296be8d6f0210bd3f0, util.py (scaled_dot_product)
# changes: scaled_dot_product renamed scaled_dot_product_attention; contract mask (True = blocked) inverted once on entry to the author's keep-mask convention (mask==0 blocked); "# %%" cell markers removed
import torch
import math
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    if mask is not None:
        mask = ~mask
    d_k = query.size()[-1]
    attention_logits = torch.bmm(query, key.transpose(1, 2))
    attention_logits = attention_logits/math.sqrt(d_k)
    if mask is not None:
        attention_logits.masked_fill_(mask == 0, 1e-15)

    attention = F.softmax(attention_logits, dim=2)
    value = torch.bmm(attention, value)
    return value, attention
