# expect: pass
# source: huggingface/transformers @00607d4287de4f142c9399c10c557d121fe641fd, src/transformers/models/imagegpt/modeling_imagegpt.py
#   (ImageGPTAttention: __init__, _attn, _split_heads/_merge_heads, forward; self-attention path)
# changes: ImageGPTAttention(config, ...) -> CausalSelfAttention(n_embd, n_head, block_size, dropout=0.0, flash=False) with
#   hidden_size = n_embd, num_attention_heads = n_head, max_position_embeddings = block_size, attn_pdrop = dropout and
#   resid_pdrop = 0 (the contract has no residual dropout); HF's Conv1D c_attn/c_proj -> nn.Linear with the same names and
#   bias (the contract's layers); nn.Buffer(...) -> register_buffer; torch_float (an HF tracing helper) -> float; branches for
#   options the contract has no input for are removed (cross-attention q_attn, layer_past/cache, attention_mask, head
#   scaling by layer index, reorder_and_upcast_attn: all off by default; scale_attn_weights is True by default and kept
#   as the plain division); the author has no flash path: flash=True calls F.scaled_dot_product_attention(is_causal=True)
#   with the module's attention-dropout rate in training, in the place of self._attn (added, in the author's style).
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()
        max_positions = block_size
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions
            ),
            persistent=False,
        )

        self.embed_dim = n_embd
        self.num_heads = n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ValueError(
                f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {self.embed_dim} and `num_heads`:"
                f" {self.num_heads})."
            )

        self.flash = flash

        self.c_attn = nn.Linear(self.embed_dim, 3 * self.embed_dim)
        self.c_proj = nn.Linear(self.embed_dim, self.embed_dim)

        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(0.0)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))

        attn_weights = attn_weights / float(value.size(-1) ** 0.5)

        # if only "normal" attention layer implements causal mask
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        # Need to be a tensor, otherwise we get error: `RuntimeError: expected scalar type float but found double`.
        # Need to be on the same device, otherwise `RuntimeError: ..., x and y to be on the same device`
        mask_value = torch.tensor(mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)

        attn_weights = nn.Softmax(dim=-1)(attn_weights)

        # Downcast (if necessary) back to V's dtype (if in mixed-precision) -- No-Op otherwise
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)

        attn_output = torch.matmul(attn_weights, value)

        return attn_output, attn_weights

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        """
        Merges attn_head_size dim and num_attn_heads dim into hidden_size
        """
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, x):
        hidden_states = x
        bsz, seq_len, _ = hidden_states.shape

        current_states = hidden_states
        query, key, value = self.c_attn(current_states).split(self.split_size, dim=2)
        key = key.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        value = value.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)

        query = query.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

        if self.flash:
            attn_output = F.scaled_dot_product_attention(
                query, key, value, dropout_p=self.attn_dropout.p if self.training else 0.0, is_causal=True
            )
        else:
            attn_output, attn_weights = self._attn(query, key, value)

        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)

        return attn_output
