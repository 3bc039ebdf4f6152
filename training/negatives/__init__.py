"""UNION's corrupted copies of human stories and our generated negatives: the negative-sampling engine.

``build`` runs it as ``datasets.map`` steps (behind build_union_data.py); ``corruptions`` and
``negation`` are the four techniques (registered in ``corruptions.TECHNIQUES``); ``lexicon``,
``morphology``, ``pos_heuristic`` and ``nltk_resources`` the word knowledge they need.
Generated negatives replace a share of the corrupted copies with written text:
``story_lm`` (the LM, its data, training and sampling), ``lm_continuations`` (export and generate)
and ``generated`` (replace) behind generated_negatives.py, and ``ngram_continuations`` behind
build_union_data.py's ``--ngram-fraction``.
"""
