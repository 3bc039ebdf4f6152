"""An exact, leaner forward pass for a BERT sequence classifier.

UNION's score reads only the pooled ``[CLS]`` state, so the last encoder layer needs every
token's keys and values but the query, attention output and feed-forward of ``[CLS]`` alone:
that skips about 10/12 of the last layer (7 % of a 12-layer BERT). Query, key and value are
also projected by one fused matrix product instead of three. The arithmetic is the same as
``BertForSequenceClassification`` in evaluation mode (tests compare the two), so scores do not
change; checkpoints of any other architecture or configuration use the model's own forward.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import transformers


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

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        bert = self.model.bert
        hidden = bert.embeddings(input_ids=input_ids)
        batch, length, width = hidden.shape
        head_dim = width // self.heads
        keep = attention_mask.bool()[:, None, None, :]  # [B, 1, 1, T]: True where a key may be attended
        layers = list(bert.encoder.layer)
        fused = self._fused_qkv(hidden.device)
        for index, (layer, (weight, bias)) in enumerate(zip(layers, fused, strict=True)):
            last = index == len(layers) - 1
            if last:
                kv = F.linear(hidden, weight[width:], bias[width:]).view(
                    batch, length, 2, self.heads, head_dim
                )
                key, value = kv.permute(2, 0, 3, 1, 4).unbind(0)
                residual = hidden[:, :1]
                query = F.linear(residual, weight[:width], bias[:width])
                query = query.view(batch, 1, self.heads, head_dim).transpose(1, 2)
            else:
                qkv = F.linear(hidden, weight, bias).view(batch, length, 3, self.heads, head_dim)
                query, key, value = qkv.permute(2, 0, 3, 1, 4).unbind(0)
                residual = hidden
            context = F.scaled_dot_product_attention(query, key, value, attn_mask=keep)
            context = context.transpose(1, 2).reshape(batch, query.shape[2], width)
            attended = layer.attention.output(context, residual)
            hidden = layer.output(layer.intermediate(attended), attended)
        return self.model.classifier(bert.pooler(hidden))
