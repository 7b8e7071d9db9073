# expect: pass
# source: jeonsworld/ViT-pytorch @0d00ad0d101aa6b8254bc4c932c4d778b71acc37, models/modeling.py (Attention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   Attention(config, vis) -> MultiHeadAttention(hidden_size, num_heads) with vis=False and dropout rates 0; query/key/value/out -> w_q/w_k/w_v/w_o;
#   forward returns the output only (not (output, weights))
# coding=utf-8
import math

import torch
import torch.nn as nn

from torch.nn import Dropout, Softmax, Linear


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super(MultiHeadAttention, self).__init__()
        self.vis = False
        self.num_attention_heads = num_heads
        self.attention_head_size = int(hidden_size / self.num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size

        self.w_q = Linear(hidden_size, self.all_head_size)
        self.w_k = Linear(hidden_size, self.all_head_size)
        self.w_v = Linear(hidden_size, self.all_head_size)

        self.w_o = Linear(hidden_size, hidden_size)
        self.attn_dropout = Dropout(0.0)
        self.proj_dropout = Dropout(0.0)

        self.softmax = Softmax(dim=-1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(*new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, X):
        hidden_states = X
        mixed_query_layer = self.w_q(hidden_states)
        mixed_key_layer = self.w_k(hidden_states)
        mixed_value_layer = self.w_v(hidden_states)

        query_layer = self.transpose_for_scores(mixed_query_layer)
        key_layer = self.transpose_for_scores(mixed_key_layer)
        value_layer = self.transpose_for_scores(mixed_value_layer)

        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_probs = self.softmax(attention_scores)
        weights = attention_probs if self.vis else None
        attention_probs = self.attn_dropout(attention_probs)

        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(*new_context_layer_shape)
        attention_output = self.w_o(context_layer)
        attention_output = self.proj_dropout(attention_output)
        return attention_output
