"""UNION: story text normalisation, checkpoint loading and batched scoring (the library under metrics/union)."""

from story_quality.versions import check_min_versions

check_min_versions("transformers", "torch", "evaluate")


CITATION = """\
@inproceedings{guan-huang-2020-union,
    title = "{UNION}: An {U}nreferenced Metric for Evaluating Open-ended Story Generation",
    author = "Guan, Jian and Huang, Minlie",
    booktitle = "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year = "2020",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.emnlp-main.736",
    pages = "9157--9166",
}
"""
