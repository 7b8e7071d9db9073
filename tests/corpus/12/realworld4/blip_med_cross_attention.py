# expect: pass
# source: salesforce/BLIP @537bebe16ef264ca2e9e9a403b4eb7095a5ff67a, models/med.py (BertSelfAttention with is_cross_attention,
#   BertSelfOutput.dense, and the (1.0 - mask) * -10000.0 additive mask of BertModel.get_extended_attention_mask)
# changes: BertSelfAttention(config, is_cross_attention=True) -> CrossAttention(d_in, d_context, d_out, num_heads,
#   qkv_bias=False): hidden_size = d_out for the heads (the author's query reads hidden_size features: here d_in),
#   encoder_width = d_context, num_attention_heads = num_heads; query/key/value -> W_query/W_key/W_value (the author always
#   has a bias: bias=qkv_bias), BertSelfOutput.dense -> out_proj (its dropout, LayerNorm and residual are the layer's
#   output block, not the contract's); the encoder mask is 1 = real token in BLIP and becomes additive with the author's
#   (1.0 - mask) * -10000.0, so the contract's True = padding mask is inverted once at the boundary; parts without a
#   contract input are removed (relative position embeddings, past_key_value, head_mask, attention-map hooks,
#   output_attentions); attention dropout p = 0 (no contract input).
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        hidden_size, encoder_width, num_attention_heads = d_out, d_context, num_heads
        if hidden_size % num_attention_heads != 0:
            raise ValueError(
                "The hidden size (%d) is not a multiple of the number of attention "
                "heads (%d)" % (hidden_size, num_attention_heads)
            )
        
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = int(hidden_size / num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size

        self.W_query = nn.Linear(d_in, self.all_head_size, bias=qkv_bias)
        self.W_key = nn.Linear(encoder_width, self.all_head_size, bias=qkv_bias)
        self.W_value = nn.Linear(encoder_width, self.all_head_size, bias=qkv_bias)
        self.out_proj = nn.Linear(hidden_size, hidden_size)

        self.dropout = nn.Dropout(0.0)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(*new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, x, context, context_padding_mask=None):
        hidden_states, encoder_hidden_states = x, context
        attention_mask = None
        if context_padding_mask is not None:
            # boundary: True = padding -> BLIP's 1 = real token, made additive as BLIP does
            extended = (~context_padding_mask)[:, None, None, :].to(dtype=x.dtype)
            attention_mask = (1.0 - extended) * -10000.0

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
        attention_probs = nn.Softmax(dim=-1)(attention_scores)

        # This is actually dropping out entire tokens to attend to, which might
        # seem a bit unusual, but is taken from the original Transformer paper.
        attention_probs_dropped = self.dropout(attention_probs)

        context_layer = torch.matmul(attention_probs_dropped, value_layer)

        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(*new_context_layer_shape)

        return self.out_proj(context_layer)
