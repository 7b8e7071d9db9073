# expect: masked_rows_not_zero
# bug-lines: 73
# source: NVIDIA/Megatron-LM @0cb36de2d698dd4dd9804659e411f3394c13f0df, megatron/model/fused_softmax.py (FusedScaleMaskSoftmax, torch path) + megatron/model/utils.py (attention_mask_func) + CoreAttention score/context steps
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   the CUDA-kernel branches and their autograd Functions removed (the torch path is what runs without fusion); AttnMaskType enum -> plain class (enum not
#   allowed); a contract function computes scores/sqrt(d) and probs @ v as CoreAttention does and builds Megatron's bool mask (True = masked) from causal | padding
# coding=utf-8
# Copyright (c) 2020, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

import math

import torch


class AttnMaskType:  # megatron/model/enums.py (an enum.Enum there)
    padding = 1
    causal = 2


def attention_mask_func(attention_scores, attention_mask):  # megatron/model/utils.py
    attention_scores.masked_fill_(attention_mask, -10000.0)
    return attention_scores


class FusedScaleMaskSoftmax(torch.nn.Module):
    """
    fused operation: scaling + mask + softmax
    Arguments:
        input_in_fp16: flag to indicate if input in fp16 data format.
        attn_mask_type: attention mask type (pad or causal)
        mask_func: mask function to be applied.
        softmax_in_fp32: if true, softmax in performed at fp32 precision.
        scale: scaling factor used in input tensor scaling.

    """

    def __init__(
        self,
        input_in_fp16,
        attn_mask_type,
        scaled_masked_softmax_fusion,
        mask_func,
        softmax_in_fp32,
        scale,
    ):
        super(FusedScaleMaskSoftmax, self).__init__()
        self.input_in_fp16 = input_in_fp16
        self.attn_mask_type = attn_mask_type
        self.scaled_masked_softmax_fusion = scaled_masked_softmax_fusion
        self.mask_func = mask_func
        self.softmax_in_fp32 = softmax_in_fp32
        self.scale = scale

        assert (
            self.scale is None or softmax_in_fp32
        ), "softmax should be in fp32 when scaled"

    def forward(self, input, mask):
        # [b, np, sq, sk]
        assert input.dim() == 4

        if self.input_in_fp16 and self.softmax_in_fp32:
            input = input.float()

        if self.scale is not None:
            input = input * self.scale
        mask_output = self.mask_func(input, mask) if mask is not None else input
        probs = torch.nn.Softmax(dim=-1)(mask_output)

        if self.input_in_fp16 and self.softmax_in_fp32:
            probs = probs.half()

        return probs


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, d_k = query.shape
    S = key.size(-2)
    # adapter: Megatron's attention mask is a bool tensor, True = masked (get_ltor_masks_and_position_ids
    # returns `attention_mask < 0.5`); here it combines the causal and the padding mask the contract gives
    attention_mask = None
    if causal:
        attention_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).triu(1)[None, None]
    if key_padding_mask is not None:
        pad = key_padding_mask.view(B, 1, 1, S)
        attention_mask = pad if attention_mask is None else (attention_mask | pad)

    # CoreAttention: raw attention scores [b, np, sq, sk] = Q K^T / norm_factor, norm_factor = sqrt(head_dim)
    norm_factor = math.sqrt(d_k)
    attention_scores = torch.matmul(query, key.transpose(-2, -1)) * (1.0 / norm_factor)

    scale_mask_softmax = FusedScaleMaskSoftmax(
        query.dtype == torch.float16, AttnMaskType.padding, False, attention_mask_func, True, None)
    attention_probs = scale_mask_softmax(attention_scores, attention_mask)

    # context layer [b, np, sq, hn]
    return torch.matmul(attention_probs, value)
