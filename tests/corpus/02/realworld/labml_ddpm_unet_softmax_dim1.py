# expect: softmax_wrong_dim
# source: labmlai/annotated_deep_learning_paper_implementations/labml_nn/diffusion/ddpm/unet.py, AttentionBlock.forward,
#   buggy version at commit 05632f9 as quoted in issue #146 ("attn = attn.softmax(dim=1)"; maintainer: "a big bug"),
#   https://github.com/labmlai/annotated_deep_learning_paper_implementations/issues/146
# license: MIT
# changes: only the attention core of AttentionBlock is kept, as the contract's function. The author's layout is
#   q/k/v (batch, seq, heads, d_k) with scores 'bijh' (i = queries, j = keys) and softmax(dim=1), i.e. over the
#   query axis i; the contract's layout is (..., L, d) so the einsums become '...id,...jd->...ij' and the same
#   query axis i is dim=-2. Scale d_k ** -0.5 as in the author's __init__. The contract's mask argument is applied
#   with masked_fill(-inf) (the author's block has no mask); weights are returned as the contract asks.
# bug-lines: 22
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scale = query.shape[-1] ** -0.5
    # Calculate scaled dot-product
    attn = torch.einsum('...id,...jd->...ij', query, key) * scale
    if mask is not None:
        attn = attn.masked_fill(mask, float('-inf'))
    # Softmax along the sequence dimension (the author's dim=1 is the query axis i)
    attn = attn.softmax(dim=-2)
    # Multiply by values
    res = torch.einsum('...ij,...jd->...id', attn, value)
    return res, attn
