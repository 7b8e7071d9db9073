# expect: runtime_error
# also: qkv_split_wrong
# bug-lines: 39, 97, 99, 100, 101, 102, 104
# source: huggingface/transformers @00491ceeee1a918b3c91685ddbd439f787eef424, src/transformers/models/codegen/modeling_codegen.py (CodeGenAttention)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   config -> contract arguments; qkv_proj/out_proj -> c_attn/c_proj with bias (contract layers; author bias=False); rotary embedding removed
#   (the contract has no positions); the additive causal mask CodeGenModel passes in is built from a registered bool buffer; layer_past/cache,
#   head_mask, output_attentions dropped; flash branch (absent, required) added on the same q/k/v
import torch
from torch import nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=False):
        super().__init__()

        max_positions = block_size
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(0.0)

        self.embed_dim = n_embd
        self.num_attention_heads = n_head
        self.head_dim = self.embed_dim // self.num_attention_heads
        if self.head_dim * self.num_attention_heads != self.embed_dim:
            raise ValueError(
                f"embed_dim must be divisible by num_attention_heads (got `embed_dim`: {self.embed_dim} and"
                f" `num_attention_heads`: {self.num_attention_heads})."
            )
        self.scale_attn = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32)).to(torch.get_default_dtype())
        self.c_attn = nn.Linear(self.embed_dim, self.embed_dim * 3)

        self.c_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.flash = flash
        # adapter: the causal mask that CodeGenModel builds and passes in (True = future)
        self.register_buffer("future", torch.ones(max_positions, max_positions, dtype=torch.bool).triu(1),
                             persistent=False)

    def _split_heads(self, x, n_head, dim_head, mp_num):
        reshaped = x.reshape(x.shape[:-1] + (n_head // mp_num, dim_head))
        reshaped = reshaped.reshape(x.shape[:-2] + (-1,) + reshaped.shape[-1:])
        return reshaped

    def _merge_heads(self, tensor, num_attention_heads, attn_head_size):
        """
        Merges attn_head_size dim and num_attn_heads dim into n_ctx
        """
        if len(tensor.shape) == 5:
            tensor = tensor.permute(0, 1, 3, 2, 4).contiguous()
        elif len(tensor.shape) == 4:
            tensor = tensor.permute(0, 2, 1, 3).contiguous()
        else:
            raise ValueError(f"Input tensor rank should be one of [4, 5], but is: {len(tensor.shape)}")
        new_shape = tensor.size()[:-2] + (num_attention_heads * attn_head_size,)
        return tensor.view(new_shape)

    def _attn(
        self,
        query,
        key,
        value,
        attention_mask=None,
        head_mask=None,
    ):
        # Keep the attention weights computation in fp32 to avoid overflow issues
        query = query.to(torch.float32)
        key = key.to(torch.float32)

        attn_weights = torch.matmul(query, key.transpose(-1, -2))

        if attention_mask is not None:
            causal_mask = attention_mask[:, :, :, : key.shape[-2]]
            attn_weights += causal_mask

        attn_weights = attn_weights / self.scale_attn
        attn_weights = nn.Softmax(dim=-1)(attn_weights)
        attn_weights = attn_weights.to(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)

        # Mask heads if we want to
        if head_mask is not None:
            attn_weights = attn_weights * head_mask

        attn_output = torch.matmul(attn_weights, value)

        return attn_output, attn_weights

    def forward(self, x):
        hidden_states, head_mask = x, None
        T = x.size(1)
        # adapter: CodeGenModel's additive causal mask, (1, 1, T, T) with finfo.min above the diagonal
        attention_mask = torch.zeros(T, T, dtype=x.dtype, device=x.device).masked_fill(
            self.future[:T, :T], torch.finfo(x.dtype).min)[None, None]

        qkv = self.c_attn(hidden_states)
        # TODO(enijkamp): factor out number of logical TPU-v4 cores or make forward pass agnostic
        mp_num = 4
        qkv_split = qkv.reshape(qkv.shape[:-1] + (mp_num, -1))

        local_dim = self.head_dim * self.num_attention_heads // mp_num
        query, value, key = torch.split(qkv_split, local_dim, dim=-1)
        query = self._split_heads(query, self.num_attention_heads, self.head_dim, mp_num=mp_num)
        key = self._split_heads(key, self.num_attention_heads, self.head_dim, mp_num=mp_num)

        value = self._split_heads(value, self.num_attention_heads, self.head_dim, mp_num=mp_num)
        value = value.permute(0, 2, 1, 3)

        key = key.permute(0, 2, 1, 3)
        query = query.permute(0, 2, 1, 3)

        # compute self-attention: V x Softmax(QK^T)
        if self.flash:
            attn_output = F.scaled_dot_product_attention(
                query, key, value, is_causal=True, dropout_p=self.attn_dropout.p if self.training else 0.0)
        else:
            attn_output, attn_weights = self._attn(query, key, value, attention_mask, head_mask)

        attn_output = self._merge_heads(attn_output, self.num_attention_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)

        return attn_output
