# expect: pass
# source: facebookresearch/fairseq/fairseq/modules/multihead_attention.py, MultiheadAttention.__init__ and forward,
#         encoder_decoder_attention=True path, with fairseq/utils.py softmax() (https://github.com/facebookresearch/fairseq/blob/3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99/fairseq/modules/multihead_attention.py)
# license: MIT (Copyright (c) Facebook, Inc. and its affiliates)
# changes: class renamed CrossAttention; constructor (embed_dim, num_heads, kdim=None, vdim=None, dropout=0.0,
#          bias=True, ..., encoder_decoder_attention=False, ...) -> the contract's
#          (d_in, d_context, d_out, num_heads, qkv_bias=False) with embed_dim = d_out, kdim = vdim = d_context,
#          encoder_decoder_attention=True, dropout 0; q_proj/k_proj/v_proj renamed W_query/W_key/W_value with
#          bias=qkv_bias, and W_query takes d_in inputs (fairseq's query must be embed_dim wide); out_proj keeps its
#          bias. quant_noise wrappers (identity at q_noise=0), bias_k/v, add_zero_attn, xformers and the
#          F.multi_head_attention_forward fast path, incremental state, beam reduction and need_weights are dropped.
#          forward(query, key, value, key_padding_mask, ...) -> forward(x, context, context_padding_mask=None):
#          fairseq is time-major, so x and context are transposed to (len, B, C) on the way in and the output back.
#          key_padding_mask keeps fairseq's convention (True = pad), which is the contract's.
import torch
import torch.nn as nn
import torch.nn.functional as F


def softmax(x, dim: int, onnx_trace: bool = False):
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)


class CrossAttention(nn.Module):
    """Multi-headed attention.

    See "Attention Is All You Need" for more details.
    """

    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        embed_dim = d_out
        self.embed_dim = embed_dim
        self.kdim = d_context
        self.vdim = d_context

        self.num_heads = num_heads

        self.head_dim = embed_dim // num_heads
        assert (
            self.head_dim * num_heads == self.embed_dim
        ), "embed_dim must be divisible by num_heads"
        self.scaling = self.head_dim**-0.5

        self.self_attention = False
        self.encoder_decoder_attention = True

        self.W_key = nn.Linear(self.kdim, embed_dim, bias=qkv_bias)
        self.W_value = nn.Linear(self.vdim, embed_dim, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, embed_dim, bias=qkv_bias)

        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.onnx_trace = False

    def forward(self, x, context, context_padding_mask=None):
        query = x.transpose(0, 1)
        key = context.transpose(0, 1)
        key_padding_mask = context_padding_mask

        tgt_len, bsz, embed_dim = query.size()
        src_len = tgt_len
        if key is not None:
            src_len, key_bsz, _ = key.size()

        # encoder-decoder attention
        q = self.W_query(query)
        if key is None:
            k = v = None
        else:
            k = self.W_key(key)
            v = self.W_value(key)
        q *= self.scaling

        q = (
            q.contiguous()
            .view(tgt_len, bsz * self.num_heads, self.head_dim)
            .transpose(0, 1)
        )
        kv_bsz = bsz  # need default value for scripting
        if k is not None:
            kv_bsz = k.size(1)
            k = (
                k.contiguous()
                .view(-1, kv_bsz * self.num_heads, self.head_dim)
                .transpose(0, 1)
            )
        if v is not None:
            v = (
                v.contiguous()
                .view(-1, kv_bsz * self.num_heads, self.head_dim)
                .transpose(0, 1)
            )

        assert k is not None
        assert k.size(1) == src_len

        if key_padding_mask is not None:
            assert key_padding_mask.size(0) == kv_bsz
            assert key_padding_mask.size(1) == src_len

        attn_weights = torch.bmm(q, k.transpose(1, 2))

        assert list(attn_weights.size()) == [bsz * self.num_heads, tgt_len, src_len]

        if key_padding_mask is not None:
            # don't attend to padding symbols
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.view(
                kv_bsz, -1, self.num_heads, tgt_len, src_len
            )
            attn_weights = attn_weights.masked_fill(
                key_padding_mask.unsqueeze(1)
                .unsqueeze(2)
                .unsqueeze(3)
                .to(torch.bool),
                float("-inf"),
            )
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)

        attn_weights_float = softmax(
            attn_weights, dim=-1, onnx_trace=self.onnx_trace
        )
        attn_weights = attn_weights_float.type_as(attn_weights)
        attn_probs = attn_weights

        assert v is not None
        attn = torch.bmm(attn_probs, v)
        assert list(attn.size()) == [bsz * self.num_heads, tgt_len, self.head_dim]
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, self.embed_dim)
        attn = self.out_proj(attn)
        return attn.transpose(0, 1)
