"""The fusion's constants: z-scores by shipped constants and length regimes, read back exactly, refused when malformed."""

from __future__ import annotations

import json

import pytest

from story_quality.fluency.fusion import FUSION_FILE, Fusion, PartScale, Regime

SCALES = {"union": PartScale(0.6, 0.2), "fluency": PartScale(-0.5, 0.25)}
REGIMES = (Regime(100, {"union": 0.7, "fluency": 0.3}), Regime(None, {"union": 1.0, "fluency": 0.0}))


def test_the_fused_score_is_the_weighted_sum_of_the_parts_z_scores_by_the_story_s_regime(tmp_path):
    fusion = Fusion(SCALES, REGIMES, "default")
    values = {"union": 0.8, "fluency": 0.0}
    assert fusion.combine(values, 100) == pytest.approx(0.7 * 1.0 + 0.3 * 2.0)
    assert fusion.combine(values, 101) == pytest.approx(1.0)
    fusion.write(tmp_path)
    assert Fusion.read(tmp_path) == fusion


def _record(**changes) -> dict:
    record = Fusion(SCALES, REGIMES, "default").to_dict()
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (_record(scales={"union": {"mean": 0, "std": 1}}), "has the parts"),
        (_record(scales={"union": {"mean": 0, "std": 0}, "fluency": {"mean": 0, "std": 1}}), "std must be positive"),
        (_record(scales={"union": {"mean": "x", "std": 1}, "fluency": {"mean": 0, "std": 1}}), "finite number"),
        (_record(regimes=[{"most_words": 100, "weights": {"union": 1, "fluency": 0}}]), "last holds any length"),
        (
            _record(regimes=[{"most_words": 300, "weights": {"union": 1, "fluency": 0}},
                             {"most_words": 100, "weights": {"union": 1, "fluency": 0}},
                             {"most_words": None, "weights": {"union": 1, "fluency": 0}}]),
            "rise in length",
        ),
        (_record(regimes=[{"most_words": None, "weights": {"union": 1}}]), "weighs each of"),
        ({"scales": {}}, "not a fusion record"),
    ],
)  # fmt: skip
def test_a_malformed_record_is_refused_naming_the_file(tmp_path, record, message):
    (tmp_path / FUSION_FILE).write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message):
        Fusion.read(tmp_path)


def test_a_folder_without_constants_is_refused(tmp_path):
    with pytest.raises(ValueError, match="holds no fusion.json"):
        Fusion.read(tmp_path)
