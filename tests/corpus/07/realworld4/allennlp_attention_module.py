# expect: masked_rows_not_zero
# bug-lines: 53, 117
# source: allenai/allennlp @23c50c76156aa83a7fe1140fdd8ae29cf6d81d70, allennlp/modules/transformer/attention_module.py
#   (AttentionModule._get_attention_probs, _position_bias) + @0f2f4d4d4ca8b4fbdeedcae0a2448b29d7e4ef35,
#   allennlp/modules/transformer/util.py (apply_mask, get_extended_attention_mask) + allennlp/nn/util.py
#   (info_value_of_dtype, min_value_of_dtype) + allennlp/modules/matrix_attention/{dot_product,scaled_dot_product}_matrix_attention.py
#   @1b851ada80a809d810d00b0f9aa350e375b6b49b / @1721882719953ac40de1adca905f1e88ce20fb77 (the "scaled_dot_product" scoring_func)
# changes: the module's scoring and masking steps on already-projected heads, as padded_attention(query, key, value,
#   key_padding_mask=None, causal=False): the q/k/v Linear layers, head split/merge and output layer are the contract's
#   caller's job here and are not used; the registered scoring class is called as a function; allennlp's masks are
#   True/1 = attend, so the contract's padding mask is inverted once at the boundary (~key_padding_mask), and causal=True
#   takes the author's decoder path (get_extended_attention_mask(..., is_decoder=True)), which needs a (B, S) mask: an
#   all-ones one is passed when there is no padding; relative-position buckets, head_mask, past key states and
#   dropout (p = 0) are removed (no contract input).
import math
from typing import Tuple

import torch


def info_value_of_dtype(dtype: torch.dtype):
    """
    Returns the `finfo` or `iinfo` object of a given PyTorch data type. Does not allow torch.bool.
    """
    if dtype == torch.bool:
        raise TypeError("Does not support torch.bool")
    elif dtype.is_floating_point:
        return torch.finfo(dtype)
    else:
        return torch.iinfo(dtype)


def min_value_of_dtype(dtype: torch.dtype):
    """
    Returns the minimum value of a given PyTorch data type. Does not allow torch.bool.
    """
    return info_value_of_dtype(dtype).min


def scaled_dot_product_matrix_attention(matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
    return matrix_1.matmul(matrix_2.transpose(-1, -2)) / math.sqrt(matrix_1.size(-1))


def apply_mask(values, mask):
    # We create a 4D attention mask from a 2D or 3D tensor mask.
    if mask.dim() == 2:
        # The shape is `batch_size x 1 x 1 x target_seq_len` which is broadcast
        # to `batch_size x num_attention_heads x source_seq_len x target_seq_len`
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    mask = mask.to(values.dtype)
    mask = (1.0 - mask) * min_value_of_dtype(values.dtype)
    return values + mask


def get_extended_attention_mask(
    attention_mask: torch.Tensor,
    input_shape: Tuple[int, ...],
    dtype: torch.dtype,
    is_decoder: bool = False,
) -> torch.Tensor:
    if attention_mask.dim() == 3:
        extended_attention_mask = attention_mask[:, None, :, :]
    elif attention_mask.dim() == 2:
        if is_decoder:
            batch_size, seq_length = input_shape
            seq_ids = torch.arange(seq_length, device=attention_mask.device)
            causal_mask = (
                seq_ids[None, None, :].repeat(batch_size, seq_length, 1) <= seq_ids[None, :, None]
            )
            causal_mask = causal_mask.to(attention_mask.dtype)

            if causal_mask.shape[1] < attention_mask.shape[1]:
                prefix_seq_len = attention_mask.shape[1] - causal_mask.shape[1]
                causal_mask = torch.cat(
                    [
                        torch.ones(
                            (batch_size, seq_length, prefix_seq_len),
                            device=attention_mask.device,
                            dtype=causal_mask.dtype,
                        ),
                        causal_mask,
                    ],
                    axis=-1,
                )

            extended_attention_mask = causal_mask[:, None, :, :] * attention_mask[:, None, None, :]
        else:
            extended_attention_mask = attention_mask[:, None, None, :]
    else:
        raise ValueError(
            "Wrong shape for input_ids (shape {}) or attention_mask (shape {})".format(
                input_shape, attention_mask.shape
            )
        )

    return extended_attention_mask


def _get_attention_probs(query_layer, key_layer, attention_mask, num_attention_heads):
    attention_scores = scaled_dot_product_matrix_attention(query_layer, key_layer)

    # _position_bias without relative buckets
    real_seq_length, key_length = query_layer.shape[-2], key_layer.shape[-2]
    position_bias = torch.zeros(
        (1, num_attention_heads, real_seq_length, key_length),
        device=attention_scores.device,
        dtype=attention_scores.dtype,
    )

    if attention_mask is not None:
        # Shape: (batch_size, num_heads, seq_length, key_length)
        position_bias = apply_mask(position_bias, attention_mask)
    attention_scores += position_bias

    attention_probs = torch.nn.Softmax(dim=-1)(attention_scores)

    return attention_probs, position_bias


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    B, H, L, _ = query.shape
    S = key.shape[2]
    # boundary: True = padding -> allennlp's True = attend
    attention_mask = ~key_padding_mask if key_padding_mask is not None else None
    if causal:
        if attention_mask is None:
            attention_mask = torch.ones(B, S, dtype=torch.bool, device=query.device)
        attention_mask = get_extended_attention_mask(attention_mask, (B, L), query.dtype, is_decoder=True)
    attention_probs, _ = _get_attention_probs(query, key, attention_mask, H)
    return torch.matmul(attention_probs, value)
