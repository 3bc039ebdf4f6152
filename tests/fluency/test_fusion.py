"""The fusion's constants: z-scores by shipped constants, read back exactly, refused when malformed."""

from __future__ import annotations

import json
import math

import pytest

from story_quality.fluency.fusion import FUSION_FILE, Fusion, PartScale, union_logit


def test_the_fused_score_is_the_weighted_sum_of_the_parts_z_scores(tmp_path):
    fusion = Fusion({"union": PartScale(1.0, 2.0, 0.7), "fluency": PartScale(-0.5, 0.25, 0.3)}, "default")
    assert fusion.combine({"union": 3.0, "fluency": 0.0}) == pytest.approx(0.7 * 1.0 + 0.3 * 2.0)
    fusion.write(tmp_path)
    assert Fusion.read(tmp_path) == fusion


def test_union_logit_is_clipped_at_the_ends():
    assert union_logit(0.0) == pytest.approx(-union_logit(1.0))
    assert math.isfinite(union_logit(0.0)) and union_logit(0.0) < -15


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {"parts": {"union": {"mean": 0, "std": 1, "weight": 1}}, "union_checkpoint": "default"},
            "has the parts",
        ),
        (
            {
                "parts": {
                    "union": {"mean": 0, "std": 0, "weight": 1},
                    "fluency": {"mean": 0, "std": 1, "weight": 1},
                },
                "union_checkpoint": "default",
            },
            "std must be positive",
        ),
        (
            {
                "parts": {
                    "union": {"mean": "x", "std": 1, "weight": 1},
                    "fluency": {"mean": 0, "std": 1, "weight": 1},
                },
                "union_checkpoint": "default",
            },
            "not a fusion record",
        ),
        ({"parts": {}}, "not a fusion record"),
    ],
)
def test_a_malformed_record_is_refused_naming_the_file(tmp_path, record, message):
    (tmp_path / FUSION_FILE).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message):
        Fusion.read(tmp_path)


def test_a_folder_without_constants_is_refused(tmp_path):
    with pytest.raises(ValueError, match="holds no fusion.json"):
        Fusion.read(tmp_path)
