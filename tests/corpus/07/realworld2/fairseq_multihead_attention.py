# expect: masked_rows_nan
# source: facebookresearch/fairseq/fairseq/modules/multihead_attention.py, MultiheadAttention.forward (the
#         non-incremental, non-xformers path after the q/k/v projections), with fairseq/utils.py softmax() and
#         fill_with_neg_inf() and the causal future mask of fairseq/models/transformer/transformer_decoder.py
#         buffered_future_mask() (https://github.com/facebookresearch/fairseq/blob/3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99/fairseq/modules/multihead_attention.py)
# license: MIT (Copyright (c) Facebook, Inc. and its affiliates)
# changes: the module method becomes the contract's function padded_attention(query, key, value,
#          key_padding_mask=None, causal=False) on already projected (B, H, L|S, d) tensors: fairseq's (bsz * heads, len,
#          head_dim) layout is obtained with reshape instead of the time-major view/transpose, self.scaling =
#          head_dim ** -0.5 is computed from the input, attn_mask is the decoder's future mask
#          (triu(fill_with_neg_inf(zeros(L, S)), 1), moved with .to(query) as the decoder
#          does with .to(tensor)) when causal; dropout, bias_k/v, add_zero_attn, sparse masks,
#          need_weights and the beam/onnx branches are dropped (all off by default). key_padding_mask keeps fairseq's
#          convention (True/1 = pad), which is the contract's. The output is reshaped back to (B, H, L, d_v).
# bug-lines: 64, 68
import torch
import torch.nn.functional as F


def fill_with_neg_inf(t):
    """FP16-compatible function that fills a tensor with -inf."""
    return t.float().fill_(float("-inf")).type_as(t)


def softmax(x, dim: int, onnx_trace: bool = False):
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    bsz, num_heads, tgt_len, head_dim = query.shape
    src_len = key.size(2)
    scaling = head_dim**-0.5
    attn_mask = None
    if causal:
        attn_mask = torch.triu(fill_with_neg_inf(torch.zeros([tgt_len, src_len])), 1).to(query)

    q = query.reshape(bsz * num_heads, tgt_len, head_dim)
    k = key.reshape(bsz * num_heads, src_len, head_dim)
    v = value.reshape(bsz * num_heads, src_len, value.size(-1))
    q = q * scaling

    attn_weights = torch.bmm(q, k.transpose(1, 2))

    assert list(attn_weights.size()) == [bsz * num_heads, tgt_len, src_len]

    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0)
        attn_weights += attn_mask

    if key_padding_mask is not None:
        # don't attend to padding symbols
        attn_weights = attn_weights.view(bsz, num_heads, tgt_len, src_len)
        attn_weights = attn_weights.view(
            bsz, -1, num_heads, tgt_len, src_len
        )
        attn_weights = attn_weights.masked_fill(
            key_padding_mask.unsqueeze(1)
            .unsqueeze(2)
            .unsqueeze(3)
            .to(torch.bool),
            float("-inf"),
        )
        attn_weights = attn_weights.view(bsz * num_heads, tgt_len, src_len)

    attn_weights_float = softmax(attn_weights, dim=-1)
    attn_weights = attn_weights_float.type_as(attn_weights)
    attn_probs = attn_weights

    attn = torch.bmm(attn_probs, v)
    assert list(attn.size()) == [bsz * num_heads, tgt_len, value.size(-1)]
    return attn.view(bsz, num_heads, tgt_len, value.size(-1))
