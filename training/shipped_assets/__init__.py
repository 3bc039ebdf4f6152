"""The builders of the assets a release ships, each a script run in a clone:

- ``python training/shipped_assets/shipped_default.py RUN ...`` builds the shipped default, the
  fp16 copy of a trained UNION run that the ``union`` metric loads as "default"
  (``metrics/union/default_checkpoint/``, with its ``SHA256SUMS``), and prints the manifest's
  sha256 to pin as ``SHIPPED_DEFAULT_MANIFEST_SHA256`` in ``story_quality/union/checkpoints.py``.
- ``python training/shipped_assets/human_scale_table.py CORPORA --checkpoint default`` builds the
  shipped default's human scale: its scores of the held-back human stories (the files
  ``python -m benchmarks.dev_split --output-dir CORPORA`` writes), in
  ``story_quality/union/human_scale_tables/default.json``, and prints the table's sha256 to pin in
  ``TABLES`` of ``story_quality/union/human_scale.py``.
- ``python training/shipped_assets/name_lists.py --census-dir DIR`` builds
  ``story_quality/union/person_names.tsv``, the first names the text normalisation tags. It prints
  no pin: a checkpoint trained with name tagging records the list's sha256 in its config and is
  refused with another list, so a new list means a newly trained default.

A new release with a new default runs them in this order: the shipped default first (and its
pin), then its human scale table (and its pin), since the table holds that checkpoint's scores
and names its weights. The name lists, when they change, come before both (and before training).
"""
