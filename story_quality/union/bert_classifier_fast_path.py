"""An exact, leaner forward pass for a BERT sequence classifier.

UNION's score reads only the pooled ``[CLS]`` state, so the last encoder layer needs every
token's keys and values but the query, attention output and feed-forward of ``[CLS]`` alone:
that skips about 10/12 of the last layer (7 % of a 12-layer BERT). Query, key and value are
also projected by one fused matrix product instead of three. The arithmetic is the same as
``BertForSequenceClassification`` in evaluation mode (tests compare the two), so scores do not
change; checkpoints of any other architecture or configuration use the model's own forward.

On a CPU in fp32 the layers run *packed*: the batch's real tokens row after row, without the
padding, through every matrix product, GELU and layer norm, and only attention sees the padded
layout. The matrix products and activations write into a few buffers reused by every layer: a
fresh multi-megabyte tensor per operation costs page faults on first touch (the allocator hands
large blocks back to the system). A batch takes about 0.93 of the padded path's time for a
BERT-base and 0.88 for the shipped MiniLM on 2 cores. Once a product has enough rows
(:data:`PACK_MIN_TOKENS`, see :mod:`story_quality.exact_products`) each row's result does not
depend on the other rows, the padded keys and values get zero attention, and the elementwise
operations are the same kernels, so packed scores equal the padded path's bit for bit (tests
check this).
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
import transformers
from transformers.activations import GELUActivation

from story_quality.exact_products import MIN_ROWS


def supports_fast_path(model: torch.nn.Module) -> bool:
    """Plain BERT classifiers only: absolute positions, an encoder, a pooler, a linear classifier."""
    config = getattr(model, "config", None)
    return (
        isinstance(model, transformers.BertForSequenceClassification)
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and not getattr(config, "is_decoder", False)
        and not getattr(config, "add_cross_attention", False)
        and model.bert.pooler is not None
        and isinstance(model.classifier, torch.nn.Linear)
        and config.problem_type in (None, "single_label_classification")
    )


@dataclasses.dataclass
class _PackedBatch:
    """Where a padded batch's real tokens are, and the buffers its packed layers reuse."""

    rows: torch.Tensor  # [N]: each real token's row in the padded [B * T] layout
    story: torch.Tensor  # [N]: the batch row each real token belongs to
    position: torch.Tensor  # [N]: its position in that row
    padded_qkv: torch.Tensor  # [B * T, 3d]: padding rows stay zero (zero attention), real rows rewritten
    qkv: torch.Tensor  # [N, 3d]
    dense: torch.Tensor  # [N, d]
    intermediate: torch.Tensor  # [N, feed-forward width]

    @classmethod
    def of(cls, mask: torch.Tensor, width: int, ffn: int, dtype: torch.dtype) -> _PackedBatch:
        """``mask`` [B, T], True at real tokens (right-padded, so each row starts with its [CLS])."""
        story, position = mask.nonzero(as_tuple=True)
        tokens = len(story)

        def empty(*shape: int) -> torch.Tensor:
            return torch.empty(shape, dtype=dtype, device=mask.device)

        return cls(
            rows=story * mask.shape[1] + position,
            story=story,
            position=position,
            padded_qkv=torch.zeros(mask.numel(), 3 * width, dtype=dtype, device=mask.device),
            qkv=empty(tokens, 3 * width),
            dense=empty(tokens, width),
            intermediate=empty(tokens, ffn),
        )

    def scatter(self, rows: torch.Tensor, columns: slice, shape: tuple[int, int, int]) -> torch.Tensor:
        """``rows`` [N, c] written into the padded layout's ``columns``: a [B, T, c] view."""
        padded = self.padded_qkv[:, columns]
        padded.index_copy_(0, self.rows, rows)
        return padded.view(shape)


def _layer_norm(norm: torch.nn.LayerNorm, hidden: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(hidden, norm.normalized_shape, norm.weight, norm.bias, norm.eps)


def _activate_in_place(activation: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """``activation(hidden)``, in place for the exact GELU (the same kernel), otherwise as it is."""
    if isinstance(activation, GELUActivation) and activation.act is F.gelu:
        return torch.ops.aten.gelu_(hidden)
    return activation(hidden)


def _linear_into(linear: torch.nn.Linear, hidden: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``linear(hidden)`` written into ``out``: the same ``addmm`` ``F.linear`` runs."""
    return torch.addmm(linear.bias, hidden, linear.weight.t(), out=out)


# The fewest real tokens a batch packs: below it, products round differently by row count.
PACK_MIN_TOKENS = MIN_ROWS


def _packs(attention_mask: torch.Tensor) -> bool:
    """Whether the batch runs packed: on a CPU, outside autocast, with enough real tokens."""
    on_cpu = attention_mask.device.type == "cpu" and not torch.is_autocast_enabled("cpu")
    return on_cpu and int(attention_mask.sum()) >= PACK_MIN_TOKENS


class BertClassifierFastPath:
    """Logits of a ``BertForSequenceClassification``, with the [CLS]-only last layer and fused QKV."""

    def __init__(self, model: transformers.BertForSequenceClassification) -> None:
        if not supports_fast_path(model):
            raise ValueError(f"{type(model).__name__} is not a plain BERT classifier.")
        self.model = model
        self.heads = model.config.num_attention_heads
        self._fused: dict[torch.device, list[tuple[torch.Tensor, torch.Tensor]]] = {}

    def _fused_qkv(self, device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """One [3d, d] projection per layer, built once per device the model is moved to."""
        if device not in self._fused:
            self._fused.clear()
            fused = []
            for layer in self.model.bert.encoder.layer:
                att = layer.attention.self
                weight = torch.cat([att.query.weight, att.key.weight, att.value.weight]).detach()
                bias = torch.cat([att.query.bias, att.key.bias, att.value.bias]).detach()
                fused.append((weight, bias))
            self._fused[device] = fused
        return self._fused[device]

    def __call__(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, packed: bool | None = None
    ) -> torch.Tensor:
        """The logits [B, labels]; ``packed`` picks the layout (None: packed on a CPU outside autocast
        for batches of at least :data:`PACK_MIN_TOKENS` real tokens; padded elsewhere, where the
        GPU's allocator already reuses memory)."""
        bert = self.model.bert
        hidden = bert.embeddings(input_ids=input_ids)
        real = attention_mask.bool()
        keep = real[:, None, None, :]  # [B, 1, 1, T]: True where a key may be attended
        if packed is None:
            packed = _packs(real)
        if packed:
            kv, cls = self._packed_layers(hidden, real, keep)
        else:
            kv, cls = self._padded_layers(hidden, keep)
        return self.model.classifier(bert.pooler(self._last_layer(kv, cls, keep)))

    def _attend(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, keep: torch.Tensor
    ) -> torch.Tensor:
        """The attention context of ``query`` [B, heads, Q, d/heads], as [B, Q, heads, d/heads]."""
        return F.scaled_dot_product_attention(query, key, value, attn_mask=keep).transpose(1, 2)

    def _split_heads(self, projected: torch.Tensor, parts: int) -> tuple[torch.Tensor, ...]:
        """[B, T, parts * d] into ``parts`` tensors [B, heads, T, d/heads]."""
        batch, length, width = projected.shape
        heads = projected.view(batch, length, parts, self.heads, width // parts // self.heads)
        return heads.permute(2, 0, 3, 1, 4).unbind(0)

    def _last_layer(self, kv: torch.Tensor, cls: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The last layer for [CLS] alone: ``kv`` [B, T, 2d] every token's keys and values, ``cls``
        [B, 1, d] the [CLS] states entering it; returns [B, 1, d]."""
        layer = self.model.bert.encoder.layer[-1]
        weight, bias = self._fused_qkv(cls.device)[-1]
        batch, _, width = cls.shape
        key, value = self._split_heads(kv, 2)
        query = F.linear(cls, weight[:width], bias[:width])
        query = query.view(batch, 1, self.heads, width // self.heads).transpose(1, 2)
        context = self._attend(query, key, value, keep).reshape(batch, 1, width)
        attended = layer.attention.output(context, cls)
        return layer.output(layer.intermediate(attended), attended)

    def _padded_layers(self, hidden: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All layers but the last on the padded batch [B, T, d], through the model's own modules:
        the last layer's keys and values [B, T, 2d] and its [CLS] input [B, 1, d]."""
        batch, length, width = hidden.shape
        fused = self._fused_qkv(hidden.device)
        for layer, (weight, bias) in zip(self.model.bert.encoder.layer[:-1], fused[:-1], strict=True):
            query, key, value = self._split_heads(F.linear(hidden, weight, bias), 3)
            context = self._attend(query, key, value, keep).reshape(batch, length, width)
            attended = layer.attention.output(context, hidden)
            hidden = layer.output(layer.intermediate(attended), attended)
        weight, bias = fused[-1]
        return F.linear(hidden, weight[width:], bias[width:]), hidden[:, :1]

    def _packed_layers(
        self, hidden: torch.Tensor, mask: torch.Tensor, keep: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """As :meth:`_padded_layers`, each layer on the real tokens alone, packed [N, d], in reused
        buffers; attention alone on the padded layout."""
        batch, length, width = hidden.shape
        layers = self.model.bert.encoder.layer
        packed = _PackedBatch.of(mask, width, layers[0].intermediate.dense.out_features, hidden.dtype)
        hidden = hidden.reshape(batch * length, width).index_select(0, packed.rows)
        fused = self._fused_qkv(hidden.device)
        for layer, (weight, bias) in zip(layers[:-1], fused[:-1], strict=True):
            qkv = torch.addmm(bias, hidden, weight.t(), out=packed.qkv)
            query, key, value = self._split_heads(
                packed.scatter(qkv, slice(None), (batch, length, 3 * width)), 3
            )
            context = self._attend(query, key, value, keep)[packed.story, packed.position].reshape(-1, width)
            dense = _linear_into(layer.attention.output.dense, context, packed.dense)
            attended = _layer_norm(layer.attention.output.LayerNorm, dense.add_(hidden))
            inner = _linear_into(layer.intermediate.dense, attended, packed.intermediate)
            inner = _activate_in_place(layer.intermediate.intermediate_act_fn, inner)
            dense = _linear_into(layer.output.dense, inner, packed.dense)
            hidden = _layer_norm(layer.output.LayerNorm, dense.add_(attended))
        weight, bias = fused[-1]
        kv_rows = packed.qkv.view(-1)[: len(hidden) * 2 * width].view(-1, 2 * width)
        torch.addmm(bias[width:], hidden, weight[width:].t(), out=kv_rows)
        kv = packed.scatter(kv_rows, slice(0, 2 * width), (batch, length, 2 * width))
        # The [CLS] rows laid out as the padded path's ``hidden[:, :1]`` (row stride T * d): the
        # last layer's matrix products read them with that stride, and a product's rounding may
        # depend on it.
        cls = torch.empty_strided(
            (batch, 1, width), (length * width, width, 1), dtype=hidden.dtype, device=hidden.device
        )
        cls[:, 0] = hidden[packed.position == 0]
        return kv, cls
