# expect: pass
# source: udit4code/CS336-assignment1-basics @36a3dddebb6a78cfa5a8f8a23c01b4a36ac3dbae, cs336_basics/TransformerImplementation/ScaledDotProductAttentionModule/ScaledDotProductAttention.py (scaled_dot_product_attention) + @fea041c05c0badd60db86aaf3f85c6103200a6bf, cs336_basics/TransformerImplementation/SoftmaxModule/Softmax.py (softmax)
# changes: the imported softmax helper inlined from Softmax.py (its long explanatory comments shortened); the author's mask convention (True = allow) translated once at the entry with mask = ~mask, and the docstring's mask lines updated; returns (output, attention) instead of output; the file-level comment block about matmul vs @ removed
import math
import torch


def softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """
    Numerically stable softmax.

    Args:
        x: Input tensor of arbitrary shape.
        dim: Dimension along which to apply softmax.

    Returns:
        Tensor of the same shape as x.
    """

    # Step 1 : Find the maximum value along the specified dimension.
    # keepdim=True preserves the dimension so broadcasting works.
    max_vals = torch.max(
        x,
        dim=dim,
        keepdim=True,
    ).values

    # Step 2 : Subtract the maximum for numerical stability. The largest element becomes 0.
    shifted = x - max_vals

    # Step 3 :Exponentiate every element.
    exp = torch.exp(shifted)

    # Step 4 : Sum exponentials along the softmax dimension. with final shape: (..., 1, ...)
    exp_sum = torch.sum(
        exp,
        dim=dim,
        keepdim=True,
    )

    # Step 5 : Normalize
    return exp / exp_sum


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """
    Compute scaled dot-product attention.

    Args:
        query: Shape = (..., seq_len, d_k. So, it can be (batch_size, seq_len, d_k)
        key: Shape = (..., seq_len, d_k). So, it can be (batch_size, seq_len, d_k)
        value: Shape = (..., seq_len, d_v). So, it can be (batch_size, seq_len, d_v)
        mask: Optional boolean mask with Shape: (seq_len, seq_len)
            True  -> block attention
            False -> allow attention

    Returns: Tensor of shape (..., seq_len, d_v). So, it can be (batch_size, seq_len, d_v)
    """
    if mask is not None:
        mask = ~mask

    # Step 1 : 
    # Compute QKᵀ.
    # Shape : Query = Key = (..., seq_len, d_k) 
    # To compute Q @ K.T, we have to transpose Key over its last 2 dimensions. So, we do : key.transpose(-2,-1) and end up with the shape (..., d_k, seq_len)
    # Result of Q @ K.T has shape = (..., seq_len, seq_len), as ignoring batch_size which is same for both, (seq_len, d_k) x (d_k, seq_len) = (seq_len, seq_len) = (batch_size, seq_len, seq_len)
    # Each element (i,j) in Q @ K.T is q_i * k_j
    scores = torch.matmul(
        query,
        key.transpose(-2, -1),
    )


    # Step 2 :Scale the attention scores.
    # Paper: QKᵀ / sqrt(d_k)
    # This prevents extremely large dot products, which would make Softmax saturate.
    # Shape of query is (batch_size, seq_len, d_k); so query.shape(-1) = d_k
    d_k = query.shape[-1]
    scores = scores / math.sqrt(d_k)

  
    # Step 3 : Apply attention mask.
    # Wherever mask == False, replace the score with -∞.
    # as, softmax(-∞) = 0, so those positions receive zero attention.
    if mask is not None:
        # For tensor y, y.masked_fill(mask, value) returns a new tensor where every value of y corresponding to a True value in the boolean mask is replaced with value. 
        # Elements where the mask is False are left unchanged. The input tensor y is not modified (unless you use the in-place version masked_fill_()).
        scores = scores.masked_fill(
            ~mask,
            float("-inf"),
        )

    # Step 4 : Convert scores into probabilities, where every row sums to one.
    # Shape of attention : (..., seq_len, seq_len) = (batch_size, seq_len, seq_len). 
    # Under the hood, all it does is apply exp on each cell and divide it by row-sum or along the chosen dim. 
    # So, it alters each cell, while keeping the shape intact.
    attention = softmax(
        scores,
        dim=-1,
    )


    # Step 5 :
    # Compute the weighted sum of Value vectors.
    # Attention has shape (..., seq_len, seq_len) = (batch_size, seq_len, seq_len)
    # Value has shape (..., seq_len, d_v) = (batch_size, seq_len, d_v)
    # Result has shape (..., seq_len, d_v) = (batch_size, seq_len, d_v); as keeping batch_size dimensions fixed, (seq_len, seq_len) @ (seq_len, d_v) = (seq_len, d_v) = (batch_size, seq_len, d_v)
    # Every output vector is basically : Summation over j for  attention(i,j) * value(j)
    output = torch.matmul(
        attention,
        value,
    )

    return output, attention
