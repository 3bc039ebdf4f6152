"""Loaded by every process of the distributed-training tests (on PYTHONPATH, with DDP_RECORD set):
each process records the rows of each of its training steps and its final weights, by rank."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib

RECORD = os.environ.get("DDP_RECORD")


def _install(record: pathlib.Path) -> None:
    import torch
    import transformers
    from safetensors.torch import save_file

    rank = os.environ.get("RANK", "0")
    real_step, real_train = transformers.Trainer.training_step, transformers.Trainer.train

    def training_step(self, model, inputs, *args, **kwargs):
        rows = [  # each row's word pieces without padding, which depends on the batch
            hashlib.sha256(str(ids[mask.bool()].tolist()).encode()).hexdigest()[:16]
            for ids, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
        ]
        with open(record / f"rows-{rank}.jsonl", "a") as handle:
            handle.write(json.dumps(rows) + "\n")
        return real_step(self, model, inputs, *args, **kwargs)

    def train(self, *args, **kwargs):
        result = real_train(self, *args, **kwargs)
        model = self.accelerator.unwrap_model(self.model)
        with torch.no_grad():
            state = {name: tensor.detach().cpu().clone() for name, tensor in model.state_dict().items()}
        save_file(state, str(record / f"weights-{rank}.safetensors"))
        return result

    transformers.Trainer.training_step, transformers.Trainer.train = training_step, train


if RECORD:
    _install(pathlib.Path(RECORD))
