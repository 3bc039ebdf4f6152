"""Does the suite still bite? Plant known bugs in a temporary copy of the repository, expect failures.

Each mutation below is a bug the suite once let through (issue 17) or a constant of the
papers. For each one the script copies the repository (tracked and untracked, not ignored,
files) to a temporary folder once, writes the mutated file, runs pytest there and puts the
file back. A mutation is *caught* when pytest fails; one that passes has *survived*, and the
script exits non-zero. The working tree is never touched.

    python tests/mutation_check.py                 # each mutation against the test files listed for it
    python tests/mutation_check.py --full          # each mutation against the whole suite (slow)
    python tests/mutation_check.py --list          # the mutations and their test files
    python tests/mutation_check.py focus-penalty union-label-ignored   # only these

Before the mutations, the same test files run on the unmutated copy (``--no-baseline`` skips
it): a failure there would make every "caught" meaningless. Run it with ``nice`` on a shared
machine; with the default subsets it takes a few minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Mutation:
    name: str
    what: str  # the bug, in words
    path: str  # file to change, relative to the repository root
    old: str  # exact text, present exactly once
    new: str
    tests: tuple[str, ...]  # test files (or node ids) expected to catch it


# The rows of issue 17's table, then further constants of the papers.
MUTATIONS = [
    Mutation(
        "union-label-ignored",
        "the union metric ignores id2label and always reads class 1",
        "story_quality/union/loading.py",
        "        return by_name[HUMAN_LABEL]\n",
        "        return 1\n",
        ("tests/union/test_loading.py",),
    ),
    Mutation(
        "union-any-labels-accepted",
        "any two-label classifier is read as UNION, class 1 when no class is named human",
        "story_quality/union/loading.py",
        "    if config.num_labels == 2 and set(by_name) == {HUMAN_LABEL, PERTURBED_LABEL}:\n",
        "    if config.num_labels == 2:\n        return by_name.get(HUMAN_LABEL, 1)\n    if False:\n",
        ("tests/union/test_loading.py",),
    ),
    Mutation(
        "train-union-no-reconstruction",
        "train_union.py sets the reconstruction weight to 0 whatever --reconstruction_weight says",
        "training/union_model.py",
        "model.reconstruction_weight = float(reconstruction_weight)",
        "model.reconstruction_weight = 0.0",
        ("tests/training/test_train_union_objective.py",),
    ),
    Mutation(
        "gruen-lm-term-rate",
        "GRUEN's LM term exp(-0.5 * lm) becomes exp(-0.25 * lm)",
        "story_quality/gruen/grammaticality.py",
        "return math.exp(-0.5 * lm_value)",
        "return math.exp(-0.25 * lm_value)",
        ("tests/gruen/test_final_score.py",),
    ),
    Mutation(
        "gruen-coherence-left-out",
        "the coherence term is left out of the final GRUEN score",
        "story_quality/gruen/aspects.py",
        "min(1.0, max(0.0, g + r + f + (c or 0.0)))",
        "min(1.0, max(0.0, g + r + f))",
        ("tests/gruen/test_final_score.py",),
    ),
    Mutation(
        "focus-penalty",
        "FOCUS_PENALTY -0.1 becomes -0.2",
        "story_quality/gruen/focus.py",
        "FOCUS_PENALTY = -0.1\n",
        "FOCUS_PENALTY = -0.2\n",
        ("tests/gruen/test_final_score.py",),
    ),
    Mutation(
        "gruen-cola-order",
        "CoLA logits assigned to the wrong sentences inside a batch",
        "story_quality/gruen/grammaticality.py",
        "for index, logit in zip(batch, logits, strict=True):",
        "for index, logit in zip(batch[::-1], logits, strict=True):",
        (
            "tests/gruen/test_aspects.py::test_cola_term_is_the_raw_class_one_logit",
            "tests/gruen/test_final_score.py",
        ),
    ),
    Mutation(
        "sampling-repetition-split",
        "the 70 / 30 sentence / n-gram repetition split becomes 30 / 70",
        "training/negatives/corruptions.py",
        "SENTENCE_REPETITION_PROB = 0.7\n",
        "SENTENCE_REPETITION_PROB = 0.3\n",
        ("tests/training/negatives/test_recipe.py",),
    ),
    Mutation(
        "sampling-weights-swapped",
        "substitution and reordering weights swapped",
        "training/negatives/corruptions.py",
        '    "substitution": 0.3,\n    "reordering": 0.4,\n',
        '    "substitution": 0.4,\n    "reordering": 0.3,\n',
        ("tests/training/negatives/test_recipe.py",),
    ),
    Mutation(
        "sampling-length-without-context",
        "sentence repetition counts L without the leading sentence",
        "training/negatives/corruptions.py",
        "length, later = len(story), list(range(1, len(story)))",
        "length, later = len(story) - 1, list(range(1, len(story)))",
        ("tests/training/negatives/test_recipe.py",),
    ),
    Mutation(
        "lexicon-wordnet-antonyms-dropped",
        "WordNet antonyms dropped in Lexicon",
        "training/negatives/lexicon.py",
        "            found.extend(sorted(wordnet_found))\n",
        "            found.extend([])\n",
        ("tests/training/negatives/test_wordnet.py",),
    ),
    # --- further constants of the papers and documented behaviour ---
    Mutation(
        "sampling-count-probs",
        "number of techniques drawn with p = .4/.3/.2/.1 instead of .5/.2/.2/.1",
        "training/negatives/corruptions.py",
        "{1: 0.5, 2: 0.2, 3: 0.2, 4: 0.1}",
        "{1: 0.4, 2: 0.3, 3: 0.2, 4: 0.1}",
        ("tests/training/negatives/test_recipe.py",),
    ),
    Mutation(
        "sampling-substitution-split",
        "the 50 / 50 sentence / word substitution split becomes 70 / 30",
        "training/negatives/corruptions.py",
        "SENTENCE_SUBSTITUTION_PROB = 0.5\n",
        "SENTENCE_SUBSTITUTION_PROB = 0.7\n",
        ("tests/training/negatives/test_recipe.py",),
    ),
    Mutation(
        "sampling-ngram-max",
        "repeated n-grams of at most 3 words instead of 4",
        "training/negatives/corruptions.py",
        "MAX_NGRAM = 4\n",
        "MAX_NGRAM = 3\n",
        ("tests/training/negatives/test_recipe.py",),
    ),
    Mutation(
        "focus-threshold",
        "the focus threshold 0.05 becomes 0.06",
        "story_quality/gruen/focus.py",
        "FOCUS_THRESHOLD = 0.05\n",
        "FOCUS_THRESHOLD = 0.06\n",
        ("tests/gruen/test_final_score.py",),
    ),
    Mutation(
        "gruen-grammaticality-scale",
        "grammaticality rescaled by 1/4 instead of 1/8",
        "story_quality/gruen/grammaticality.py",
        "(lm_term(lm_value) + cola_logit) / 8.0 + 0.5",
        "(lm_term(lm_value) + cola_logit) / 4.0 + 0.5",
        ("tests/gruen/test_final_score.py",),
    ),
    Mutation(
        "redundancy-penalty",
        "redundancy -0.2 per flag instead of -0.1",
        "story_quality/gruen/redundancy.py",
        "PENALTY_PER_FLAG = -0.1\n",
        "PENALTY_PER_FLAG = -0.2\n",
        ("tests/gruen/test_final_score.py",),
    ),
    Mutation(
        "redundancy-contained-flags",
        "a contained sentence counts 3 flags instead of 4 (shown by the module's doctests)",
        "story_quality/gruen/redundancy.py",
        "CONTAINED_FLAGS = 4\n",
        "CONTAINED_FLAGS = 3\n",
        ("tests/library/test_doctests.py",),
    ),
    Mutation(
        "reconstruction-weights-the-context",
        "the reconstruction loss weights the leading context (shown by union_model's doctests)",
        "training/union_model.py",
        "unweighted = min(input_length, 1 + context_length)",
        "unweighted = min(input_length, 1)",
        ("tests/library/test_doctests.py",),
    ),
    Mutation(
        "generated-negatives-blocking",
        "3-gram blocking of generated negatives switched off",
        "training/negatives/story_lm.py",
        "if blocked[row] and not done[row] and len(histories[row]) >= 2:",
        "if False:",
        ("tests/training/test_generated_negatives.py",),
    ),
    Mutation(
        "generated-negatives-folds",
        "a story is continued by the LM that read it (the WP fold test)",
        "training/negatives/lm_continuations.py",
        "if other != number",
        "if other == number or other != number",
        ("tests/training/test_generated_negatives.py",),
    ),
    # --- issue 34: behaviour no mutation covered before ---
    Mutation(
        "training-resume-ignored",
        "--resume_from_checkpoint is ignored: the run starts over (from the base model) instead",
        "training/run_setup.py",
        "trainer.train(resume_from_checkpoint=checkpoint)",
        "trainer.train()",
        ("tests/training/test_resume_after_kill.py",),
    ),
    Mutation(
        "union-recorded-normalisation-ignored",
        "the union metric reads raw text whatever normalisation the checkpoint records",
        "story_quality/union/scorer.py",
        "self.normalization = StoryNormalization.from_config(self.model.config)",
        "self.normalization = StoryNormalization()",
        ("tests/union/test_union_metric.py::test_normalisation_is_applied",),
    ),
    Mutation(
        "union-windows-unweighted",
        "a long story's windows are averaged without weighting them by their lengths",
        "story_quality/union/windows.py",
        "        totals[story] += score * len(row)\n        weights[story] += len(row)\n",
        "        totals[story] += score\n        weights[story] += 1\n",
        ("tests/union/test_windows.py",),
    ),
    Mutation(
        "union-windows-first-only",
        "a long story read in windows keeps only its first window",
        "story_quality/union/windows.py",
        "            for first, last in windows:\n",
        "            for first, last in windows[:1]:\n",
        ("tests/union/test_windows.py",),
    ),
    Mutation(
        "shipped-checkpoint-files-unchecked",
        "the shipped default's files are no longer checked against their sha256 in the manifest",
        "story_quality/union/checkpoints.py",
        "        if sha256_of(path) != digest:\n",
        "        if False:\n",
        ("tests/union/test_checkpoints.py",),
    ),
    Mutation(
        "shipped-checkpoint-unverified-at-load",
        "loading the shipped default no longer verifies it",
        "story_quality/union/checkpoints.py",
        "        verify_checkpoint(folder, SHIPPED_DEFAULT_MANIFEST_SHA256)\n",
        "",
        ("tests/union/test_checkpoints.py",),
    ),
    Mutation(
        "metric-thread-lock-removed",
        "a metric instance's lock becomes a no-op: threads compute and add at once",
        "story_quality/metric_module.py",
        'self.__dict__.setdefault("_compute_lock", threading.RLock())',
        'self.__dict__.setdefault("_compute_lock", __import__("contextlib").nullcontext())',
        ("tests/library/test_metric_module.py",),
    ),
    Mutation(
        "story-lm-best-epoch-not-kept",
        "the generated negatives' story LM returns its last epoch, not its best on held-out windows",
        "training/negatives/story_lm.py",
        "    model.load_state_dict(best_state)\n",
        "",
        (
            "tests/training/test_generated_negatives.py::test_the_lm_learns_a_pattern_and_keeps_its_best_epoch",
        ),
    ),
    Mutation(
        "wordnet-copy-shared-temporary",
        "processes copying WordNet at once write one shared temporary file (and rename it half-written)",
        "training/negatives/nltk_resources.py",
        'handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")',
        'temporary = str(path.parent / f".{path.name}.tmp")\n'
        "    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)",
        ("tests/training/negatives/test_lexicon.py::test_the_debian_copy_is_never_seen_half_written",),
    ),
    # The score command (written last, against its rewrite): resume, row alignment, the gather.
    Mutation(
        "cli-resume-starts-over",
        "a rerun of score on a cut-short output scores every row again and appends them",
        "story_quality/cli/score.py",
        "            return len(done)\n",
        "            return 0\n",
        ("tests/cli/test_score.py::test_a_cut_short_output_is_completed_by_rerunning",),
    ),
    Mutation(
        "cli-resume-other-input-accepted",
        "a resumed output is no longer checked against the input's text",
        "story_quality/cli/score.py",
        "read_sealed_rows(args.output, expected=identities, source=args.input)",
        "read_sealed_rows(args.output)",
        ("tests/cli/test_score.py",),
    ),
    Mutation(
        "cli-rows-misaligned",
        "score writes each chunk's scores against the wrong rows",
        "story_quality/cli/score.py",
        "zip([row.index for row in good], per_row(",
        "zip([row.index for row in good][::-1], per_row(",
        ("tests/cli/test_score.py::test_one_row_per_story_equal_to_compute_with_the_signature_first",),
    ),
    Mutation(
        "cli-gather-skipped",
        "with several processes, process 0 writes only the scores it computed itself",
        "story_quality/cli/score.py",
        "            scored = gather_object(scored)\n",
        "            pass\n",
        (
            "tests/cli/test_score.py::test_two_torchrun_processes_each_score_rows_and_write_the_one_process_file",
        ),
    ),
    Mutation(
        "ngram-folds",
        "a story is continued by the n-gram model of its own fold, which read it",
        "training/negatives/ngram_continuations.py",
        "if _fold(index) != fold",
        "if _fold(index) == fold",
        ("tests/training/negatives/test_ngram_continuations.py",),
    ),
    Mutation(
        "compare-row-hash",
        "compare reads a score row edited after score sealed it",
        "story_quality/score_file/reading.py",
        "if ROW_HASH in record and not (",
        "if False and (",
        ("tests/cli/test_compare.py",),
    ),
    # --- issue 47: files never lost to score, numbers compare can vouch for ---
    Mutation(
        "score-truncates-any-row-opening",
        "score drops a last line that merely opens like a row (a user's one-line JSON file)",
        "story_quality/score_file/resume.py",
        'return started and (opening.startswith(tail) or tail.startswith(opening + b", "))',
        "return tail.startswith(ROW_START[: len(tail)])",
        ("tests/library/test_files.py::test_a_one_line_file_that_opens_like_a_row_is_never_truncated",),
    ),
    Mutation(
        "score-lock-per-path",
        "the lock belongs to the path named, not to the real file (links, relative names)",
        "story_quality/score_file/claim.py",
        "real = pathlib.Path(os.path.realpath(output))",
        "real = pathlib.Path(output)",
        ("tests/library/test_files.py::test_one_lock_per_file_whatever_path_names_it",),
    ),
    Mutation(
        "score-hard-link-unlocked",
        "the output file itself is not locked, so a run through a hard link writes too",
        "story_quality/score_file/claim.py",
        "held = _hold_file(output, lock, option)",
        "held = None",
        ("tests/library/test_files.py::test_one_lock_per_file_whatever_path_names_it",),
    ),
    Mutation(
        "score-pipe-accepted",
        "a pipe or device (/dev/stdout) is taken as the output",
        "story_quality/score_file/claim.py",
        "if output.exists() and not output.is_file():",
        "if False:",
        ("tests/library/test_files.py::test_a_pipe_or_device_is_refused_and_gets_no_lock",),
    ),
    Mutation(
        "score-input-rows-unrecorded",
        "score no longer records its input's row count, so compare cannot tell a cut output",
        "story_quality/cli/score.py",
        "            record[score_file.INPUT_ROWS] = total\n",
        "",
        ("tests/cli/test_compare.py::test_files_that_story_quality_score_wrote_compare_end_to_end",),
    ),
    Mutation(
        "score-teardown-without-barrier",
        "each process destroys its group without waiting for the others",
        "story_quality/process_group.py",
        "        meet_before_leaving(dist)\n",
        "        pass\n",
        (
            "tests/cli/test_score.py::test_every_process_meets_at_a_barrier_then_leaves_the_group_whatever_happens",
        ),
    ),
    Mutation(
        "bootstrap-sacrebleu-centring",
        "the paired bootstrap centres the absolute resampled differences (sacrebleu): p too small",
        "story_quality/evaluation/significance.py",
        "count = _at_least(np.abs(resampled - observed), abs(observed))",
        "count = _at_least(np.abs(resampled) - np.abs(resampled).mean(), abs(observed))",
        ("tests/evaluation/test_significance.py::test_under_the_null_both_tests_reject_at_their_level",),
    ),
    Mutation(
        "paired-test-on-one-row",
        "a paired test on one row is run (the bootstrap then says p = 1 / (R + 1))",
        "story_quality/evaluation/significance.py",
        "if len(first) < MIN_PAIRED_ROWS:",
        "if False:",
        ("tests/evaluation/test_significance.py::test_one_row_or_a_few_rows_are_refused_or_named",),
    ),
    Mutation(
        "compare-unsealed-row",
        "compare reads a row whose row_hash was deleted in a sealed file",
        "story_quality/score_file/reading.py",
        "if sealed and unsealed:",
        "if False:",
        ("tests/cli/test_compare.py::test_a_row_whose_seal_was_deleted_is_refused",),
    ),
    Mutation(
        "compare-unfinished-output",
        "compare reads an output with fewer rows than its input had",
        "story_quality/score_file/reading.py",
        "if written < expected:",
        "if False:",
        ("tests/cli/test_compare.py::test_an_unfinished_output_is_refused_unless_asked",),
    ),
    Mutation(
        "compare-output-being-written",
        "compare reads an output score is still writing",
        "story_quality/score_file/reading.py",
        "if holder is not None:",
        "if False:",
        ("tests/cli/test_compare.py::test_an_output_being_written_is_refused",),
    ),
    Mutation(
        "compare-human-scales-mixed",
        "percentiles against different human scale tables are compared as one scale",
        "story_quality/evaluation/comparison.py",
        "raw = parsed is not None and column == parsed.metric",
        "raw = True",
        ("tests/cli/test_compare.py::test_percentiles_against_different_human_tables_are_refused",),
    ),
    Mutation(
        "compare-same-file-twice",
        "one file given twice is compared as two systems",
        "story_quality/evaluation/comparison.py",
        "if score_file.same_file(first, second):",
        "if False:",
        ("tests/cli/test_compare.py::test_the_same_file_twice_is_refused",),
    ),
    Mutation(
        "compare-out-of-range",
        "a union score of 5.0 is compared",
        "story_quality/score_file/reading.py",
        "if not low <= number_value <= high:",
        "if False:",
        ("tests/cli/test_compare.py::test_values_no_score_file_holds_are_named",),
    ),
    Mutation(
        "compare-identity-as-score",
        "--score-column index is compared as a score",
        "story_quality/evaluation/comparison.py",
        "if column in refused:",
        "if False:",
        ("tests/cli/test_compare.py::test_a_row_identity_is_no_score_column",),
    ),
    Mutation(
        "compare-true-is-1",
        "a JSON true row id is paired with the id 1",
        "story_quality/evaluation/comparison.py",
        "and not isinstance(value, bool) and math.isfinite(value)",
        "and math.isfinite(value)",
        ("tests/cli/test_compare.py::test_json_true_is_not_the_row_id_1",),
    ),
    Mutation(
        "compare-seed-unchecked",
        "--seed -1 reaches numpy and ends in a traceback",
        "story_quality/evaluation/significance.py",
        "        check_seed(seed)\n",
        "        pass\n",
        ("tests/cli/test_compare.py::test_every_bad_value_is_a_usage_error",),
    ),
    Mutation(
        "compare-silent-disagreement",
        "an interval that excludes 0 beside a p above alpha gets no word",
        "story_quality/evaluation/comparison.py",
        "if excludes_zero != (pair.test.p_paired_bootstrap < 1 - level):",
        "if False:",
        (
            "tests/cli/test_compare.py::test_one_shared_row_is_refused_and_an_interval_that_disagrees_with_p_gets_a_word",
        ),
    ),
    Mutation(
        "compare-splits-at-u2028",
        "compare splits JSON lines at U+2028 (str.splitlines)",
        "story_quality/input_files.py",
        "enumerate(text_lines(text), 1)",
        "enumerate(text.splitlines(), 1)",
        ("tests/cli/test_compare.py::test_a_raw_line_separator_inside_a_json_row_is_read",),
    ),
    Mutation(
        "percentile-moves-with-batch",
        "percentiles count exact ties only, so a held-back story's percentile moves with its batch",
        "story_quality/union/human_scale.py",
        "TIE_TOLERANCE = 1e-5\n",
        "TIE_TOLERANCE = 0.0\n",
        ("tests/union/test_human_scale.py",),
    ),
    Mutation(
        "signature-weights-only",
        "the checkpoint hash covers the weights only, not the config and tokenizer beside them",
        "story_quality/checkpoints/files.py",
        "for path in scoring_files(folder):",
        "for path in []:",
        (
            "tests/library/test_signature.py::test_files_beside_the_weights_that_change_scores_change_the_signature",
        ),
    ),
    Mutation(
        "onednn-feed-forward-dropped",
        "under oneDNN, a feed-forward slice's fresh product is not written back into the layer's rows",
        "story_quality/bert_forward/packed_layers.py",
        "                    target.copy_(out)\n",
        "                    pass\n",
        ("tests/bert_forward/test_packed_layers.py",),
    ),
    Mutation(
        "onednn-bias-dropped",
        "the oneDNN mode drops a linear layer's bias",
        "story_quality/bert_forward/onednn_products.py",
        "                return onednn_linear(hidden, weight, bias)",
        "                return onednn_linear(hidden, weight, None)",
        ("tests/bert_forward/test_onednn_products.py",),
    ),
    Mutation(
        "onednn-layout-stale",
        "a weight changed in place keeps multiplying by its old oneDNN layout",
        "story_quality/bert_forward/onednn_products.py",
        "None if weight.is_inference() else weight._version)",
        "None)",
        ("tests/bert_forward/test_onednn_products.py",),
    ),
    Mutation(
        "projection-slice-dropped",
        "only the first slice of a packed projection is written into the padded layout",
        "story_quality/bert_forward/packed_layers.py",
        "        for rows in product_slices(len(hidden)):\n",
        "        for rows in product_slices(len(hidden))[:1]:\n",
        ("tests/bert_forward/test_packed_layers.py",),
    ),
    Mutation(
        "finite-sum-trusted",
        "a weight whose sum overflows is taken for a NaN or infinite weight",
        "story_quality/devices.py",
        "            and not torch.isfinite(tensor).all()\n",
        "",
        ("tests/library/test_text_checks.py",),
    ),
    Mutation(
        "meta-tie-calibration-off",
        "the tie-calibrated pairwise accuracy never tries an epsilon above 0",
        "story_quality/evaluation/meta_figures.py",
        "    best = int(np.argmax(correct))\n",
        "    best = 0\n",
        (
            "tests/evaluation/test_meta_figures.py::test_tie_calibration_finds_the_best_epsilon_of_every_candidate",
        ),
    ),
    Mutation(
        "meta-kendall-tau-a",
        "Kendall's tau divides by all pairs (tau-a) instead of the untied ones (tau-b)",
        "story_quality/evaluation/meta_figures.py",
        "    untied = math.sqrt(float(np.count_nonzero(sign_x)) * float(np.count_nonzero(sign_y)))\n",
        "    untied = float(len(sign_x))\n",
        ("tests/evaluation/test_meta_figures.py",),
    ),
    Mutation(
        "meta-permutation-story-by-story",
        "with systems, the permutation test swaps story by story again (too many false positives)",
        "story_quality/evaluation/meta_statistics.py",
        "    factors = [codes for codes in (design.systems, design.groups) if codes is not None]\n    parts, left",
        "    factors = []\n    parts, left",
        (
            "tests/evaluation/test_meta_statistics.py::"
            "test_with_systems_the_parts_swapped_by_system_keep_the_level_where_story_swaps_do_not",
        ),
    ),
    Mutation(
        "meta-ceiling-includes-the-rater",
        "the raters' ceiling compares each rater with a mean that includes that rater",
        "story_quality/evaluation/meta_statistics.py",
        "        others = np.delete(raters, k, axis=1)\n",
        "        others = raters\n",
        ("tests/evaluation/test_meta_statistics.py",),
    ),
    Mutation(
        "meta-hash-unchecked",
        "a score row matched by index is taken whatever text it scored",
        "story_quality/evaluation/meta_reading.py",
        "    if found != score_file.text_hash(ratings.texts[index]):\n",
        "    if False:\n",
        ("tests/evaluation/test_meta_reading.py",),
    ),
    Mutation(
        "meta-bootstrap-items-only",
        "the bootstrap never resamples the systems",
        "story_quality/evaluation/meta_statistics.py",
        "        if design.systems is not None:\n            weight = weight",
        "        if False:\n            weight = weight",
        ("tests/evaluation/test_meta_statistics.py",),
    ),
    # --- issue 67: one strict reader, score and compare agreeing on a finished file ---
    Mutation(
        "csv-extra-fields-accepted",
        "a CSV record with more fields than the header (an unquoted comma) is read, cut at the comma",
        "story_quality/input_files.py",
        "        if len(record) != len(columns):",
        "        if len(record) < len(columns):",
        ("tests/library/test_files.py",),
    ),
    Mutation(
        "score-resumes-a-shorter-input",
        "score resumes an output started for a longer input, ending it early",
        "story_quality/score_file/resume.py",
        "and recorded != len(expected):",
        "and recorded < len(expected):",
        ("tests/cli/test_score_and_compare_agree.py",),
    ),
]


def repository_files(root: pathlib.Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files (what a fresh clone plus local work holds)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode()
        names = [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "dist", "outputs"}
        names = [
            str(path.relative_to(root))
            for path in root.rglob("*")
            if (path.is_file() or path.is_symlink()) and not skip & set(path.relative_to(root).parts)
        ]
    return sorted(name for name in set(names) if (root / name).is_file() or (root / name).is_symlink())


def copy_repository(root: pathlib.Path, target: pathlib.Path) -> None:
    """Copy the tracked files, the links in story_quality/ to the repository's folders as links, so
    that the copy (on PYTHONPATH) is the package that runs, whole."""
    for name in repository_files(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination, follow_symlinks=False)


def check_imports_come_from(copy: pathlib.Path, env: dict[str, str]) -> None:
    """The copy's packages, not the editable install's, must be the ones imported there."""
    probe = (
        "import story_quality.metrics as m, story_quality.training as t; print(m.__file__); print(t.__file__)"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=env, capture_output=True, text=True)
    paths = out.stdout.split()
    if (
        out.returncode != 0
        or not paths
        or not all(pathlib.Path(p).resolve().is_relative_to(copy.resolve()) for p in paths)
    ):
        raise SystemExit(f"the copy's packages are not the ones imported: {out.stdout}{out.stderr}")


def run_pytest(copy: pathlib.Path, tests: list[str], env: dict[str, str], timeout: int) -> tuple[int, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout} s"
    lines = (done.stdout + done.stderr).strip().splitlines()
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return done.returncode, (failed[:1] or lines[-1:] or [""])[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to run (default: all)")
    parser.add_argument("--full", action="store_true", help="run the whole suite for every mutation")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per pytest run (default 1800)")
    args = parser.parse_args(argv)
    known = {m.name: m for m in MUTATIONS}
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"unknown mutation(s) {unknown}; --list shows them")
    chosen = [known[name] for name in args.names] if args.names else MUTATIONS
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.what}\n    {m.path}; caught by {', '.join(m.tests)}")
        return 0

    with tempfile.TemporaryDirectory(prefix="mutation-check-") as folder:
        copy = pathlib.Path(folder) / "repo"
        copy_repository(REPO, copy)
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH")]))
        )
        check_imports_come_from(copy, env)
        for m in chosen:  # every mutation must still apply to today's code
            count = (copy / m.path).read_text().count(m.old)
            if count != 1:
                raise SystemExit(f"{m.name}: the text to change occurs {count} times in {m.path}, not once")

        def tests_of(mutations) -> list[str]:
            return ["tests"] if args.full else list(dict.fromkeys(t for m in mutations for t in m.tests))

        if not args.no_baseline:
            start = time.monotonic()
            code, summary = run_pytest(copy, tests_of(chosen), env, args.timeout)
            print(
                f"baseline (no mutation): exit {code} in {time.monotonic() - start:.0f} s: {summary}",
                flush=True,
            )
            if code != 0:
                print("the unmutated tests fail: fix that first")
                return 2
        survived = []
        for m in chosen:
            path = copy / m.path
            original = path.read_text()
            path.write_text(original.replace(m.old, m.new))
            start = time.monotonic()
            try:
                code, summary = run_pytest(copy, tests_of([m]), env, args.timeout)
            finally:
                path.write_text(original)
            verdict = "caught" if code in (1, 2) else "SURVIVED" if code == 0 else f"error (exit {code})"
            print(f"{m.name}: {verdict} in {time.monotonic() - start:.0f} s: {summary}", flush=True)
            if verdict != "caught":
                survived.append(m.name)
        print(f"{len(chosen) - len(survived)} of {len(chosen)} mutations caught")
        if survived:
            print("not caught: " + ", ".join(survived))
        return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
