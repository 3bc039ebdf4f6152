"""An exact, leaner forward pass for a BERT sequence classifier.

A classifier reads only the pooled ``[CLS]`` state (UNION's score, GRUEN's CoLA logit), so the
last encoder layer needs every token's keys and values but the query, attention output and
feed-forward of ``[CLS]`` alone: that skips about 10/12 of the last layer (7 % of a 12-layer
BERT). The other layers run through :class:`story_quality.bert_forward.packed_layers.BertLayers`: query, key and
value fused, and on a CPU in fp32 packed (the batch's real tokens alone, in reused buffers), which
takes about 0.93 of the padded layout's time for a BERT-base and 0.88 for the shipped MiniLM on 2
cores, with bit-identical logits. The arithmetic is the same as ``BertForSequenceClassification``
in evaluation mode up to float rounding (tests compare the two); checkpoints of any other
architecture or configuration use the model's own forward.
"""

from __future__ import annotations

import torch
import transformers

from story_quality.bert_forward.packed_layers import (
    PACK_MIN_TOKENS,
    BertLayers,
    packs,
    supports_bert_layers,
)

__all__ = ["PACK_MIN_TOKENS", "BertClassifierFastPath", "supports_fast_path"]


def supports_fast_path(model: torch.nn.Module) -> bool:
    """Plain BERT classifiers only: absolute positions, an encoder, a pooler, a linear classifier."""
    return (
        isinstance(model, transformers.BertForSequenceClassification)
        and supports_bert_layers(model.bert)
        and model.bert.pooler is not None
        and isinstance(model.classifier, torch.nn.Linear)
        and model.config.problem_type in (None, "single_label_classification")
    )


class BertClassifierFastPath:
    """Logits of a ``BertForSequenceClassification``, with the [CLS]-only last layer and fused QKV."""

    def __init__(self, model: transformers.BertForSequenceClassification) -> None:
        if not supports_fast_path(model):
            raise ValueError(f"{type(model).__name__} is not a plain BERT classifier.")
        self.model = model
        self.layers = BertLayers(model.bert)

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
            packed = packs(real, hidden.dtype)
        if packed:
            kv, cls = self._packed_layers(hidden, real, keep)
        else:
            kv, cls = self._padded_layers(hidden, keep)
        return self.model.classifier(bert.pooler(self._last_layer(kv, cls, keep)))

    def _last_layer(self, kv: torch.Tensor, cls: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The last layer for [CLS] alone: ``kv`` [B, T, 2d] every token's keys and values, ``cls``
        [B, 1, d] the [CLS] states entering it; returns [B, 1, d]."""
        layer = self.layers.layers[-1]
        weight, bias = self.layers.fused_qkv(cls.device)[-1]
        batch, _, width = cls.shape
        heads = self.layers.heads
        key, value = self.layers.split_heads(kv, 2)
        query = torch.nn.functional.linear(cls, weight[:width], bias[:width])
        query = query.view(batch, 1, heads, width // heads).transpose(1, 2)
        context = self.layers.attend(query, key, value, keep).reshape(batch, 1, width)
        attended = layer.attention.output(context, cls)
        return layer.output(layer.intermediate(attended), attended)

    def _padded_layers(self, hidden: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All layers but the last on the padded batch [B, T, d]: the last layer's keys and values
        [B, T, 2d] and its [CLS] input [B, 1, d]."""
        width = hidden.shape[2]
        hidden = self.layers.padded(hidden, keep, len(self.layers.layers) - 1)
        weight, bias = self.layers.fused_qkv(hidden.device)[-1]
        return torch.nn.functional.linear(hidden, weight[width:], bias[width:]), hidden[:, :1]

    def _packed_layers(
        self, hidden: torch.Tensor, mask: torch.Tensor, keep: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """As :meth:`_padded_layers`, each layer on the real tokens alone, packed [N, d], in reused
        buffers; attention alone on the padded layout."""
        batch, length, width = hidden.shape
        packed = self.layers.packed_batch(mask, hidden.dtype)
        hidden = self.layers.packed(packed.pack(hidden), packed, keep, len(self.layers.layers) - 1)
        weight, bias = self.layers.fused_qkv(hidden.device)[-1]
        kv = packed.projected(weight[width:], bias[width:], hidden)
        # The [CLS] rows laid out as the padded path's ``hidden[:, :1]`` (row stride T * d): the
        # last layer's matrix products read them with that stride, and a product's rounding may
        # depend on it.
        cls = torch.empty_strided(
            (batch, 1, width), (length * width, width, 1), dtype=hidden.dtype, device=hidden.device
        )
        cls[:, 0] = hidden[packed.position == 0]  # right-padded rows: position 0 is each one's [CLS]
        return kv, cls
