"""UNION's corrupted copies of human stories: the negative-sampling engine behind build_union_data.py.

``build`` runs it as ``datasets.map`` steps; ``corruptions`` and ``negation`` are the four
techniques; ``lexicon``, ``morphology``, ``pos_heuristic`` and ``nltk_resources`` the word knowledge
they need; ``related_stories`` the optional on-topic donors.
"""
