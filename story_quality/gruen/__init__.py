"""GRUEN: the four aspects of linguistic quality (the library under metrics/gruen)."""

from story_quality.versions import check_min_versions

check_min_versions("transformers", "torch", "evaluate")


CITATION = """\
@inproceedings{zhu-bhat-2020-gruen,
    title = "{GRUEN} for Evaluating Linguistic Quality of Generated Text",
    author = "Zhu, Wanzheng and Bhat, Suma",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2020",
    year = "2020",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.findings-emnlp.9",
    pages = "94--108",
}
"""
