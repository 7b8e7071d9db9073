# expect: pass
# source: allenai/allennlp @23c50c76156aa83a7fe1140fdd8ae29cf6d81d70, allennlp/modules/transformer/attention_module.py
#   (AttentionModule with is_decoder=True, is_cross_attention=True, output_linear=True: _transpose_for_scores, _query_layer,
#   _project, _get_attention_probs, _output_layer, forward) + @0f2f4d4d4ca8b4fbdeedcae0a2448b29d7e4ef35,
#   allennlp/modules/transformer/util.py (apply_mask) + allennlp/nn/util.py (info_value_of_dtype, min_value_of_dtype) +
#   allennlp/modules/matrix_attention/{dot_product,scaled_dot_product}_matrix_attention.py (the "scaled_dot_product" scoring)
# changes: AttentionModule(hidden_size, attention_head_size, num_attention_heads, scoring_func, output_linear, dropout, bias,
#   ...) -> CrossAttention(d_in, d_context, d_out, num_heads, qkv_bias=False) with num_attention_heads = num_heads,
#   attention_head_size = d_out // num_heads, hidden_size = d_out, output_linear = True (the contract's out_proj),
#   bias = qkv_bias for q/k/v; query/key/value/output -> W_query/W_key/W_value/out_proj; the author's key and value read
#   hidden_size features from source_states and its query hidden_size features: here d_context and d_in (the contract's
#   widths), and out_proj keeps its bias (the contract's layer); scoring_func is fixed to the registered
#   "scaled_dot_product" class, called as a function; relative-position buckets, past key/value states, head_mask,
#   output_attentions and dropout (p = 0) removed (no contract input); allennlp's source mask is True = attend, so the
#   contract's True = padding mask is inverted once at the boundary.
import math

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


def scaled_dot_product_matrix_attention(matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
    return matrix_1.matmul(matrix_2.transpose(-1, -2)) / math.sqrt(matrix_1.size(-1))


class CrossAttention(torch.nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        hidden_size, num_attention_heads = d_out, num_heads
        attention_head_size = d_out // num_heads

        if hidden_size % num_attention_heads != 0:
            raise ValueError(
                "The hidden size (%d) is not a multiple of the number of attention "
                "heads (%d)" % (hidden_size, num_attention_heads)
            )

        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = attention_head_size
        self.all_head_size = self.num_attention_heads * self.attention_head_size

        self.W_query = torch.nn.Linear(d_in, self.all_head_size, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_context, self.all_head_size, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_context, self.all_head_size, bias=qkv_bias)

        # out linear layer for distilbert, T5 etc.
        self.out_proj = torch.nn.Linear(self.all_head_size, hidden_size)

    def _transpose_for_scores(self, x: torch.Tensor) -> torch.Tensor:
        new_x_shape = x.size()[:-1] + (
            self.num_attention_heads,
            self.attention_head_size,
        )
        x = x.view(*new_x_shape)
        return x.permute(0, 2, 1, 3)

    def _get_attention_probs(self, query_layer, key_layer, attention_mask):
        attention_scores = scaled_dot_product_matrix_attention(query_layer, key_layer)

        # _position_bias without relative buckets
        position_bias = torch.zeros(
            (1, self.num_attention_heads, query_layer.shape[-2], key_layer.shape[-2]),
            device=attention_scores.device,
            dtype=attention_scores.dtype,
        )

        if attention_mask is not None:
            # Shape: (batch_size, num_heads, seq_length, key_length)
            position_bias = apply_mask(position_bias, attention_mask)
        attention_scores += position_bias

        attention_probs = torch.nn.Softmax(dim=-1)(attention_scores)
        return attention_probs

    def _output_layer(self, attention_probs: torch.Tensor, value_layer: torch.Tensor):
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(*new_context_layer_shape)

        context_layer = self.out_proj(context_layer)

        return context_layer

    def forward(self, x, context, context_padding_mask=None):
        query_states, source_states = x, context
        # boundary: True = padding -> allennlp's True = attend
        source_attention_mask = ~context_padding_mask if context_padding_mask is not None else None

        query_layer = self._transpose_for_scores(self.W_query(query_states))
        # cross-attn
        key_layer = self._transpose_for_scores(self.W_key(source_states))
        value_layer = self._transpose_for_scores(self.W_value(source_states))

        attention_mask = source_attention_mask

        attention_probs = self._get_attention_probs(query_layer, key_layer, attention_mask)

        return self._output_layer(attention_probs, value_layer)
