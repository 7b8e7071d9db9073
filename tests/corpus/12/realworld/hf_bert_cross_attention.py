# expect: pass
# source: huggingface/transformers/src/transformers/models/bert/modeling_bert.py, BertSelfAttention (transpose_for_scores
#   and the cross-attention branch of forward, absolute position embeddings) + ModuleUtilsMixin.invert_attention_mask in
#   modeling_utils.py (transformers 4.x)
# license: Apache-2.0
# changes: BertSelfAttention(config) -> CrossAttention(d_in, d_context, d_out, num_heads, qkv_bias) (contract;
#   all_head_size = d_out, dropout 0.0, query/key/value -> W_query (d_in->d_out) / W_key, W_value (d_context->d_out),
#   bias=qkv_bias); BertSelfOutput's dense -> out_proj (its dropout, residual and LayerNorm left out, the contract's
#   module ends at the projection); forward(hidden_states, ..., encoder_hidden_states, encoder_attention_mask) ->
#   forward(x, context, context_padding_mask): HF's encoder_attention_mask is 1 = real token, so it is
#   (~context_padding_mask) and goes through invert_attention_mask ((1 - m) * finfo(dtype).min with self.dtype = the
#   parameters' dtype). Past key/values, head_mask and relative positions left out.
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(
                f"The hidden size ({d_out}) is not a multiple of the number of attention "
                f"heads ({num_heads})"
            )

        self.num_attention_heads = num_heads
        self.attention_head_size = int(d_out / num_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size

        self.W_query = nn.Linear(d_in, self.all_head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, self.all_head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, self.all_head_size, bias=qkv_bias)

        self.dropout = nn.Dropout(0.0)
        self.out_proj = nn.Linear(d_out, d_out)

    def transpose_for_scores(self, x: torch.Tensor) -> torch.Tensor:
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def invert_attention_mask(self, encoder_attention_mask):
        if encoder_attention_mask.dim() == 3:
            encoder_extended_attention_mask = encoder_attention_mask[:, None, :, :]
        if encoder_attention_mask.dim() == 2:
            encoder_extended_attention_mask = encoder_attention_mask[:, None, None, :]
        dtype = self.W_query.weight.dtype
        encoder_extended_attention_mask = encoder_extended_attention_mask.to(dtype=dtype)  # fp16 compatibility
        encoder_extended_attention_mask = (1.0 - encoder_extended_attention_mask) * torch.finfo(dtype).min
        return encoder_extended_attention_mask

    def forward(self, x, context, context_padding_mask=None):
        hidden_states, encoder_hidden_states = x, context
        attention_mask = None
        if context_padding_mask is not None:
            attention_mask = self.invert_attention_mask(~context_padding_mask)

        mixed_query_layer = self.W_query(hidden_states)

        key_layer = self.transpose_for_scores(self.W_key(encoder_hidden_states))
        value_layer = self.transpose_for_scores(self.W_value(encoder_hidden_states))

        query_layer = self.transpose_for_scores(mixed_query_layer)

        # Take the dot product between "query" and "key" to get the raw attention scores.
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))

        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            # Apply the attention mask is (precomputed for all layers in BertModel forward() function)
            attention_scores = attention_scores + attention_mask

        # Normalize the attention scores to probabilities.
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)

        # This is actually dropping out entire tokens to attend to, which might
        # seem a bit unusual, but is taken from the original Transformer paper.
        attention_probs = self.dropout(attention_probs)

        context_layer = torch.matmul(attention_probs, value_layer)

        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)

        return self.out_proj(context_layer)
