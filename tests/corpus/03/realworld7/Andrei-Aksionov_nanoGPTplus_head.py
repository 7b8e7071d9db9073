# expect: pass
# source: Andrei-Aksionov/nanoGPTplus @3fb01c368db28f905904feed962cc0468771ed5c, src/model/gpt_language_model/attention.py (SelfAttentionHead)
# changes: class renamed SelfAttentionHead -> CausalAttention; constructor (embeddings_size, context_size, head_size,
#          dropout, *, is_decoder) -> (d_in, d_out, context_length, dropout, qkv_bias=False) with head_size = d_out and
#          is_decoder fixed to True (the contract is causal); projections renamed key_weights/query_weights/value_weights
#          -> W_key/W_query/W_value with bias=qkv_bias (contract layer names and bias flag)
import torch
import torch.nn.functional as F
from torch import Tensor, nn


class CausalAttention(nn.Module):
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        qkv_bias: bool = False,
    ) -> None:
        """Single self-attention head.

        Parameters
        ----------
        d_in : int
            size of the embeddings - the size of input of self-attention
        d_out : int
            the size of output of self-attention
        context_length : int
            the number of tokens that will be used during calculation attention map and
            weighted averaging of value of each token
        dropout : float
            how many connection between tokens are dropped during each forward pass
        qkv_bias : bool
            whether the key, query and value projections have a bias
        """
        super().__init__()

        self.embeddings_size = d_in
        self.context_size = context_length
        self.head_size = d_out
        self.is_decoder = True

        # what don't need `bias` because we simply want to do matrix multiplications
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        # If you have parameters in your model, which should be saved and restored in the state_dict,
        # but not trained by the optimizer, you should register them as buffers.
        # Buffers won't be returned in model.parameters(), so that the optimizer won't have a change to update them.
        self.register_buffer("tril", torch.tril(torch.ones(self.context_size, self.context_size)))

        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """Forward method for Self-Attention.

        Self-attention does these 6 steps:

        1. takes information from the token x
        2. encodes it into vectors key, query and value, where (intuitively):
            a. key - information of what the token has
            b. query - what the token is interested in
            c. value - if some token finds current token 'interesting' then this value should be used
        3. calculate attention scores by doing dot product between key and query
        4. [optional for decoder] creates triangular matrix that will help to mask tokens from the 'future', in other
        words token at position 4 should not communicate with token at position 5 and above, only with the previous
        tokens (3 and below)
        5. mask token from the 'future' with -inf value, which after softmax operation becomes 0
        6. does weighted sum by multiplying obtained attention scores and value matrix

        Parameters
        ----------
        x : Tensor
            input tensor containing vector representation of x

        Returns
        -------
        Tensor
            output vector representation of x of size (batch, time-step, head_size)
        """
        # batch, time-step, channels
        B, T, _ = x.shape  # noqa: N806

        # here and below `C` means `head_size`, not channels of input
        key = self.W_key(x)  # (B, T, C)
        query = self.W_query(x)  # (B, T, C)
        value = self.W_value(x)  # (B, T, C)

        # first to obtaining attention scores: dot product of key and query
        attention_scores = query @ key.mT  # (B, T, C) @ (B, C, T) -> (B, T, T)

        # In order to preserve 1 unit variance of the product of multiplication of two vectors
        # we need to divide by square root of the features size (in our case - attention head size)
        # We need it to make sure that the values after softmax are well spread out, otherwise in worst
        # case scenario the values after the softmax will converge to one-hot encoding (like [0, 0, 1]) and
        # that will mean that the attention will be on a single (or couple of) tokens, and we want it to be
        # spread out (like [0.2, 0.1, 0.7])
        # we want to aggregate information not from a single node
        head_size = key.shape[-1]
        attention_scores *= head_size**-0.5

        # if it's a decoder we need to mask 'future' tokens with '-inf' value
        if self.is_decoder:
            # [0.9, -0.6, 0.3] -> [0.9, -inf, -inf]
            # [0.1, 0.5, -0.1] -> [0.1, 0.5, -inf]
            # [0.1, 0.2, 0.3]  -> [0.1, 0.2, 0.3]
            # and after softmax `-inf` becomes 0
            # this doesn't allow current token communicate with future ones
            attention_scores = attention_scores.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # (B, T, T)

        # since we want to do weighted averaging we need to transform attention scores into range [0, 1]
        # and sum of all scores should be equal to 1; softmax is a good tool for it
        attention_scores = F.softmax(attention_scores, dim=-1)  # (B, T, T)

        # randomly prevent some nodes from communicating, some of theme randomly are set to zero
        # helps prevent overfitting
        attention_scores = self.dropout(attention_scores)

        # perform the weighted aggregation of the values
        return attention_scores @ value  # (B, T, T) @ (B, T, C) -> (B, T, C)
