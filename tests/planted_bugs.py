"""The bugs ``tests/mutation_check.py`` plants in the metrics and the training engine (issue 17, the
papers' constants, issue 34): each the exact text it replaces, in which file, and the tests
expected to catch it. Those in the commands are ``planted_bugs_commands.py``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Mutation:
    name: str
    what: str  # the bug, in words
    path: str  # file to change, relative to the repository root
    old: str  # exact text, present exactly once
    new: str
    tests: tuple[str, ...]  # test files (or node ids) expected to catch it


# The rows of issue 17's table, then further constants of the papers.
IN_THE_METRICS = [
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
        ("tests/test_doctests.py",),
    ),
    Mutation(
        "reconstruction-weights-the-context",
        "the reconstruction loss weights the leading context (shown by union_model's doctests)",
        "training/union_model.py",
        "unweighted = min(input_length, 1 + context_length)",
        "unweighted = min(input_length, 1)",
        ("tests/test_doctests.py",),
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
        ("tests/test_metric_module.py",),
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
        "            return len(written[0].rows)\n",
        "            return 0\n",
        ("tests/cli/test_score.py::test_a_cut_short_output_is_completed_by_rerunning",),
    ),
    Mutation(
        "cli-resume-other-input-accepted",
        "a resumed output is no longer checked against the input's text",
        "story_quality/score_file/reading.py",
        "read_sealed_rows(path, expected=expected, source=source)",
        "read_sealed_rows(path)",
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
            "tests/cli/test_score_processes.py::test_two_torchrun_processes_each_score_rows_and_write_the_one_process_file",
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
    Mutation(
        "acceptability-head-exported",
        "the exported classifier keeps every weight but the reconstruction head's, CoLA's head too",
        "story_quality/training/union_model.py",
        "if k in wanted}",
        'if not k.startswith("cls.")}',
        ("tests/training/test_acceptability.py::test_the_exported_classifier_leaves_the_head_out",),
    ),
    Mutation(
        "acceptability-same-draw",
        "every step draws the same CoLA batch",
        "story_quality/training/acceptability.py",
        "        self.draws += 1\n",
        "        self.draws += 0\n",
        (
            "tests/training/test_acceptability.py::test_the_trainer_adds_the_weighted_head_loss_in_training_only",
        ),
    ),
    Mutation(
        "acceptability-one-order",
        "every pass over CoLA visits the sentences in the same order",
        "story_quality/training/acceptability.py",
        "manual_seed(self.seed * 100_003 + epoch)",
        "manual_seed(self.seed * 100_003)",
        (
            "tests/training/test_acceptability.py::test_draws_visit_every_sentence_once_a_pass_and_repeat_by_seed",
        ),
    ),
]
