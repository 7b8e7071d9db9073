# expect: pass
# source: OpenNMT/OpenNMT-py @0155d95740aad99f7d346df8ab7cd4768d10d6e6, onmt/modules/multi_headed_attn.py (MultiHeadedAttention, context attention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   MultiHeadedAttention(head_count, model_dim, dropout) -> CrossAttention(d_in, d_context, d_out, num_heads, qkv_bias) with dropout 0 and no
#   relative positions; linear_query/keys/values -> W_query/W_key/W_value (d_in or d_context -> d_out), final_linear -> out_proj; forward(x, context, mask)
#   calls the author's path with key = value = context, query = x, layer_cache None and the padding mask as [B, 1, S]; only the output returned
""" Multi-Head Attention module """
import math
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    """
    Multi-Head Attention module from
    "Attention is All You Need"
    :cite:`DBLP:journals/corr/VaswaniSPUJGKP17`.

    Similar to standard `dot` attention but uses
    multiple attention distributions simulataneously
    to select relevant items.

    Args:
       head_count (int): number of parallel heads
       model_dim (int): the dimension of keys/values/queries,
           must be divisible by head_count
       dropout (float): dropout parameter
    """

    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        head_count, model_dim, dropout, max_relative_positions = num_heads, d_out, 0.0, 0
        assert model_dim % head_count == 0
        self.dim_per_head = model_dim // head_count
        self.model_dim = model_dim

        super(CrossAttention, self).__init__()
        self.head_count = head_count

        self.W_key = nn.Linear(d_context,
                               head_count * self.dim_per_head, bias=qkv_bias)
        self.W_value = nn.Linear(d_context,
                                 head_count * self.dim_per_head, bias=qkv_bias)
        self.W_query = nn.Linear(d_in,
                                 head_count * self.dim_per_head, bias=qkv_bias)
        self.softmax = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(model_dim, model_dim)

        self.max_relative_positions = max_relative_positions

    def forward(self, x, context, context_padding_mask=None):
        # adapter: OpenNMT's context attention gets (key, value, query, mask) with the source
        # padding mask as `[batch, 1, src_len]`, True = padding
        key, value, query, layer_cache, type = context, context, x, None, "context"
        mask = None if context_padding_mask is None else context_padding_mask.unsqueeze(1)

        batch_size = key.size(0)
        dim_per_head = self.dim_per_head
        head_count = self.head_count
        key_len = key.size(1)
        query_len = query.size(1)
        device = key.device

        def shape(x):
            """  projection """
            return x.view(batch_size, -1, head_count, dim_per_head) \
                .transpose(1, 2)

        def unshape(x):
            """  compute context """
            return x.transpose(1, 2).contiguous() \
                    .view(batch_size, -1, head_count * dim_per_head)

        # 1) Project key, value, and query.
        key = self.W_key(key)
        value = self.W_value(value)
        query = self.W_query(query)
        key = shape(key)
        value = shape(value)

        query = shape(query)

        key_len = key.size(2)
        query_len = query.size(2)

        # 2) Calculate and scale scores.
        query = query / math.sqrt(dim_per_head)
        # batch x num_heads x query_len x key_len
        query_key = torch.matmul(query, key.transpose(2, 3))

        scores = query_key
        scores = scores.float()

        if mask is not None:
            mask = mask.unsqueeze(1)  # [B, 1, 1, T_values]
            scores = scores.masked_fill(mask, -1e18)

        # 3) Apply attention dropout and compute context vectors.
        attn = self.softmax(scores).to(query.dtype)
        drop_attn = self.dropout(attn)

        context_original = torch.matmul(drop_attn, value)

        context = unshape(context_original)

        output = self.out_proj(context)

        return output
