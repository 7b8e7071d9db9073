# expect: no_scaling
# bug-lines: 83
# source: PiotrNawrot/nanoT5 @2609e08aa8999ecb125157e1bc88700a8a00fd1d, nanoT5/utils/t5_model.py (T5Attention, cross-attention path)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   T5Config -> contract arguments (d_kv = d_out // num_heads, with the contract's divisibility check; dropout 0; no relative bias as in T5's
#   EncDecAttention); q/k/v/o -> W_query/W_key/W_value/out_proj (q: d_in, k/v: d_context; out_proj with bias); the additive mask T5 builds
#   (finfo.min at padding) made from context_padding_mask; returns only the output; the scores call written on one line
import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.is_decoder = True
        self.has_relative_attention_bias = False
        self.d_model = d_out
        self.key_value_proj_dim = d_out // num_heads
        self.n_heads = num_heads
        self.dropout = 0.0
        self.inner_dim = self.n_heads * self.key_value_proj_dim

        # Mesh TensorFlow initialization to avoid scaling before softmax
        self.W_query = nn.Linear(d_in, self.inner_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, self.inner_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, self.inner_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(self.inner_dim, self.d_model)

    def forward(self, x, context, context_padding_mask=None):
        hidden_states, key_value_states, position_bias = x, context, None
        # adapter: T5's encoder attention mask, inverted into an additive (batch, 1, 1, key_length) mask
        # with finfo.min at the padding, as ModuleUtilsMixin.invert_attention_mask does
        mask = None
        if context_padding_mask is not None:
            mask = torch.zeros(context_padding_mask.shape, dtype=x.dtype, device=x.device).masked_fill(
                context_padding_mask, torch.finfo(x.dtype).min)[:, None, None, :]
        """
        Self-attention (if key_value_states is None) or attention over source sentence (provided by key_value_states).
        """
        # Input is (batch_size, seq_length, dim)
        # Mask is (batch_size, key_length) (non-causal) or (batch_size, key_length, key_length)
        batch_size, seq_length = hidden_states.shape[:2]

        real_seq_length = seq_length

        key_length = real_seq_length if key_value_states is None else key_value_states.shape[1]

        def shape(states):
            """projection"""
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)

        def unshape(states):
            """reshape"""
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)

        def project(hidden_states, proj_layer, key_value_states):
            """projects hidden states correctly to key/query states"""
            if key_value_states is None:
                # self-attn
                # (batch_size, n_heads, seq_length, dim_per_head)
                hidden_states = shape(proj_layer(hidden_states))
            else:
                # cross-attn
                # (batch_size, n_heads, seq_length, dim_per_head)
                hidden_states = shape(proj_layer(key_value_states))

            return hidden_states

        # get query states
        query_states = shape(self.W_query(hidden_states))  # (batch_size, n_heads, seq_length, dim_per_head)

        # get key/value states
        key_states = project(
            hidden_states, self.W_key, key_value_states
        )
        value_states = project(
            hidden_states, self.W_value, key_value_states
        )

        # compute scores
        scores = torch.matmul(query_states, key_states.transpose(3, 2))  # equivalent of torch.einsum("bnqd,bnkd->bnqk", query_states, key_states), compatible with onnx op>9

        if position_bias is None:
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros(
                    (1, self.n_heads, real_seq_length, key_length), device=scores.device, dtype=scores.dtype
                )

            if mask is not None:
                # Masking happens here, masked elements in the mask have the value of -inf
                position_bias = position_bias + mask  # (batch_size, n_heads, seq_length, key_length)

        position_bias_masked = position_bias

        scores += position_bias_masked
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(
            scores
        )  # (batch_size, n_heads, seq_length, key_length)
        attn_weights = nn.functional.dropout(
            attn_weights, p=self.dropout, training=self.training
        )  # (batch_size, n_heads, seq_length, key_length)

        attn_output = unshape(torch.matmul(attn_weights, value_states))  # (batch_size, seq_length, dim)
        attn_output = self.out_proj(attn_output)

        return attn_output
