"""Naming a checkpoint, for both metrics: parsed once, its files checked, the Hub reached or not.

:mod:`.reference` (``name@revision``, a folder or a Hub id, parsed once into one type),
:mod:`.files` (what a checkpoint folder must hold, and the sha256 of its files) and
:mod:`.hub_reach` (whether the Hub endpoint answers, asked once with a short timeout).
"""
