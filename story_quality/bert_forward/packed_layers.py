"""BERT's encoder layers run *packed*: on a batch's real tokens alone, in buffers every layer reuses.

On a CPU in fp32, every matrix product, GELU and layer norm of a layer runs on the batch's real
tokens row after row, without the padding, and only attention sees the padded layout (the padded
keys and values are zero and get zero weight). The products and activations write into a few
buffers reused by every layer: a fresh multi-megabyte tensor per operation costs page faults on
first touch (the allocator hands large blocks back to the system). Once a product has enough rows
(:data:`PACK_MIN_TOKENS`, see :mod:`story_quality.bert_forward.exact_products`) each row's result does not
depend on the other rows and the elementwise operations are the same kernels, so the packed layers
equal :meth:`BertLayers.padded`'s bit for bit (tests check this).

Query, key and value are projected by one fused matrix product instead of three, in both layouts:
the results equal the model's own forward to float rounding (about 1e-7; tests compare the two).
UNION's classifier (:mod:`story_quality.bert_forward.classifier`) and GRUEN's masked LM and CoLA
classifier run their BERT encoders through this module.
"""

from __future__ import annotations

import dataclasses
import math

import torch
import torch.nn.functional as F
import transformers
from transformers.activations import GELUActivation

from story_quality.bert_forward import onednn_products
from story_quality.bert_forward.exact_products import MIN_ROWS, row_slices

# The fewest real tokens a batch packs: below it, products round differently by row count.
PACK_MIN_TOKENS = MIN_ROWS
# The most rows a packed layer's wide products take at a time: the fused query/key/value projection
# and the feed-forward. The feed-forward's middle, rows x 4d, is written and read back at once: for
# BERT-base at 1,024 rows 12 MB, which stays in a server CPU's last-level cache, where a whole
# batch's (3,600 ROC tokens: 44 MB) goes out to memory. oneDNN writes each product into a fresh
# tensor, and one over 32 MB (a whole batch's projection: 33 MB) is mapped from the system anew
# every time, page by page; slices avoid both (the speeds: benchmarks/log/2026-11-28-onednn-fp32.md).
SLICE_ROWS = 1024


def product_slices(rows: int) -> list[slice]:
    """``rows`` cut into the fewest nearly equal slices of at most :data:`SLICE_ROWS`: from
    :data:`PACK_MIN_TOKENS` rows on, every slice has at least that many (each row's bits then do
    not depend on the slice it is in)."""
    return row_slices(rows, SLICE_ROWS)


def supports_bert_layers(bert: torch.nn.Module) -> bool:
    """A plain BERT encoder: absolute positions, no decoder, no cross-attention."""
    config = getattr(bert, "config", None)
    return (
        isinstance(bert, transformers.BertModel)
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and not getattr(config, "is_decoder", False)
        and not getattr(config, "add_cross_attention", False)
    )


def packs(attention_mask: torch.Tensor, dtype: torch.dtype) -> bool:
    """Whether a batch runs packed: in fp32 (``dtype``, the model's) on a CPU, outside autocast, with
    enough real tokens; half-precision kernels may round a row by how many rows share the product."""
    exact = dtype == torch.float32 and not torch.is_autocast_enabled("cpu")
    return exact and attention_mask.device.type == "cpu" and int(attention_mask.sum()) >= PACK_MIN_TOKENS


@dataclasses.dataclass
class PackedBatch:
    """Where a padded batch's real tokens are, and the buffers its packed layers reuse."""

    rows: torch.Tensor  # [N]: each real token's row in the padded [B * T] layout
    story: torch.Tensor  # [N]: the batch row each real token belongs to
    position: torch.Tensor  # [N]: its position in that row
    padded_qkv: torch.Tensor  # [B * T, 3d]: padding rows stay zero (zero attention), real rows rewritten
    qkv: torch.Tensor  # [at most SLICE_ROWS, 3d]
    dense: torch.Tensor  # [N, d]
    intermediate: torch.Tensor  # [at most SLICE_ROWS, feed-forward width]
    shape: tuple[int, int]  # (B, T)

    @classmethod
    def of(cls, mask: torch.Tensor, width: int, ffn: int, dtype: torch.dtype) -> PackedBatch:
        """``mask`` [B, T], True at real tokens, right-padded (so each row starts with its [CLS]); the
        packed rows are in ``mask.nonzero()``'s order."""
        story, position = mask.nonzero(as_tuple=True)
        tokens = len(story)

        def empty(*shape: int) -> torch.Tensor:
            return torch.empty(shape, dtype=dtype, device=mask.device)

        return cls(
            rows=story * mask.shape[1] + position,
            story=story,
            position=position,
            padded_qkv=torch.zeros(mask.numel(), 3 * width, dtype=dtype, device=mask.device),
            qkv=empty(min(tokens, SLICE_ROWS), 3 * width),
            dense=empty(tokens, width),
            intermediate=empty(min(tokens, SLICE_ROWS), ffn),
            shape=(mask.shape[0], mask.shape[1]),
        )

    def pack(self, padded: torch.Tensor) -> torch.Tensor:
        """[B, T, c] to the real tokens' rows [N, c]."""
        return padded.reshape(-1, padded.shape[-1]).index_select(0, self.rows)

    @onednn_products.own_routing()
    def projected(self, weight: torch.Tensor, bias: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """``F.linear(hidden, weight, bias)`` of the real tokens' rows ``hidden`` [N, d], written
        slice by slice into the padded layout's first columns: a [B, T, c] view."""
        columns = self.padded_qkv[:, : weight.shape[0]]
        for rows in product_slices(len(hidden)):
            part = product_into(
                weight, bias, hidden[rows], self.qkv[: rows.stop - rows.start, : weight.shape[0]]
            )
            columns.index_copy_(0, self.rows[rows], part)
        return columns.view(*self.shape, weight.shape[0])


def _layer_norm(norm: torch.nn.LayerNorm, hidden: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(hidden, norm.normalized_shape, norm.weight, norm.bias, norm.eps)


def _activate_in_place(activation: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """``activation(hidden)``, in place for the exact GELU (the same kernel), otherwise as it is."""
    if isinstance(activation, GELUActivation) and activation.act is F.gelu:
        return torch.ops.aten.gelu_(hidden)
    return activation(hidden)


def product_into(
    weight: torch.Tensor, bias: torch.Tensor, hidden: torch.Tensor, out: torch.Tensor
) -> torch.Tensor:
    """``F.linear(hidden, weight, bias)``: written into ``out`` by the same ``addmm`` ``F.linear``
    runs, or under :func:`~story_quality.bert_forward.onednn_products.onednn_products` by oneDNN (which writes
    a fresh tensor)."""
    if onednn_products.routes_to_onednn(hidden, weight, bias):
        return onednn_products.onednn_linear(hidden, weight, bias)
    return torch.addmm(bias, hidden, weight.t(), out=out)


def _linear_into(linear: torch.nn.Linear, hidden: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return product_into(linear.weight, linear.bias, hidden, out)


class BertLayers:
    """A ``BertModel``'s encoder layers with fused query/key/value, padded or packed."""

    def __init__(self, bert: transformers.BertModel) -> None:
        if not supports_bert_layers(bert):
            raise ValueError(f"{type(bert).__name__} is not a plain BERT encoder.")
        self.bert = bert
        self.layers = bert.encoder.layer
        self.heads = bert.config.num_attention_heads
        self._fused: dict[torch.device, list[tuple[torch.Tensor, torch.Tensor]]] = {}

    def fused_qkv(self, device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """One [3d, d] projection per layer, built once per device the model is moved to."""
        if device not in self._fused:
            self._fused.clear()
            fused = []
            for layer in self.layers:
                att = layer.attention.self
                weight = torch.cat([att.query.weight, att.key.weight, att.value.weight]).detach()
                bias = torch.cat([att.query.bias, att.key.bias, att.value.bias]).detach()
                fused.append((weight, bias))
            self._fused[device] = fused
        return self._fused[device]

    def attend(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, keep: torch.Tensor
    ) -> torch.Tensor:
        """The attention context of ``query`` [B, heads, Q, d/heads], as [B, Q, heads, d/heads].

        ``keep`` goes in as the additive mask (0 or -inf) that attention makes of a boolean one
        itself: the same bits, measured 5-15 % faster on a CPU at BERT's lengths."""
        bias = torch.zeros(keep.shape, dtype=query.dtype, device=query.device).masked_fill_(~keep, -math.inf)
        return F.scaled_dot_product_attention(query, key, value, attn_mask=bias).transpose(1, 2)

    def split_heads(self, projected: torch.Tensor, parts: int) -> tuple[torch.Tensor, ...]:
        """[B, T, parts * d] into ``parts`` tensors [B, heads, T, d/heads]."""
        batch, length, width = projected.shape
        heads = projected.view(batch, length, parts, self.heads, width // parts // self.heads)
        return heads.permute(2, 0, 3, 1, 4).unbind(0)

    def padded(self, hidden: torch.Tensor, keep: torch.Tensor, count: int) -> torch.Tensor:
        """The first ``count`` layers on the padded batch [B, T, d], through the model's own modules
        but for the fused projection; ``keep`` [B, 1, 1, T] is True where a key may be attended."""
        batch, length, width = hidden.shape
        for layer, (weight, bias) in zip(self.layers[:count], self.fused_qkv(hidden.device), strict=False):
            query, key, value = self.split_heads(F.linear(hidden, weight, bias), 3)
            context = self.attend(query, key, value, keep).reshape(batch, length, width)
            attended = layer.attention.output(context, hidden)
            hidden = layer.output(layer.intermediate(attended), attended)
        return hidden

    @onednn_products.own_routing()
    def packed(
        self, hidden: torch.Tensor, batch: PackedBatch, keep: torch.Tensor, count: int
    ) -> torch.Tensor:
        """As :meth:`padded` on the real tokens' rows ``hidden`` [N, d], in ``batch``'s buffers;
        attention alone on the padded layout. Returns [N, d], which may be one of the buffers."""
        width = hidden.shape[1]
        for layer, (weight, bias) in zip(self.layers[:count], self.fused_qkv(hidden.device), strict=False):
            query, key, value = self.split_heads(batch.projected(weight, bias, hidden), 3)
            context = self.attend(query, key, value, keep)[batch.story, batch.position].reshape(-1, width)
            dense = _linear_into(layer.attention.output.dense, context, batch.dense)
            attended = _layer_norm(layer.attention.output.LayerNorm, dense.add_(hidden))
            dense = batch.dense
            for rows in product_slices(len(attended)):
                target = dense[rows]
                out = self._feed_forward(layer, attended[rows], batch.intermediate, target)
                if out.data_ptr() != target.data_ptr():  # oneDNN wrote a fresh tensor
                    target.copy_(out)
            hidden = _layer_norm(layer.output.LayerNorm, dense.add_(attended))
        return hidden

    @staticmethod
    def _feed_forward(
        layer: torch.nn.Module, attended: torch.Tensor, middle: torch.Tensor, out: torch.Tensor
    ) -> torch.Tensor:
        """The feed-forward product of some rows ``attended``, its wide middle in ``middle``."""
        inner = _linear_into(layer.intermediate.dense, attended, middle[: len(attended)])
        inner = _activate_in_place(layer.intermediate.intermediate_act_fn, inner)
        return _linear_into(layer.output.dense, inner, out)

    def packed_batch(self, mask: torch.Tensor, dtype: torch.dtype) -> PackedBatch:
        """The buffers of a batch whose real tokens ``mask`` [B, T] marks."""
        width, ffn = self.bert.config.hidden_size, self.layers[0].intermediate.dense.out_features
        return PackedBatch.of(mask, width, ffn, dtype)


@torch.inference_mode()
def last_hidden_rows(
    layers: BertLayers, input_ids: torch.Tensor, attention_mask: torch.Tensor
) -> torch.Tensor:
    """The last layer's state of every real token, [N, d], in ``attention_mask.nonzero()``'s order:
    packed where :func:`packs` allows, otherwise on the padded batch (:meth:`BertLayers.padded`)."""
    hidden = layers.bert.embeddings(input_ids=input_ids)
    real = attention_mask.bool()
    keep = real[:, None, None, :]
    count = len(layers.layers)
    if not packs(real, hidden.dtype):
        return layers.padded(hidden, keep, count)[real]
    batch = layers.packed_batch(real, hidden.dtype)
    return layers.packed(batch.pack(hidden), batch, keep, count)
