"""The score file of ``story-quality score``, in one room: written, sealed, resumed and read back.

``score`` writes one sealed JSON line per input row (:mod:`.rows`: what a row holds and its seal),
holding the file for its run and never changing a file it did not write (:mod:`.claim`),
continuing an output cut short only when every row is this input's (:mod:`.resume`); ``score``'s
summary, ``compare`` and ``meta-evaluate`` read it back through its one reader, :class:`ScoreFile`
(:mod:`.reading`: typed rows keyed by index or id, the file's signature), refusing what they cannot
vouch for. Every refusal, of a file that cannot be written, read or compared, is a
:class:`ScoreFileError` naming the file (and line) and what to do.
"""

from story_quality.score_file.claim import (
    being_written,
    check_folder,
    claim_output,
    lock_path,
    refuse_inputs,
    refuse_unusable_name,
    same_file,
)
from story_quality.score_file.reading import (
    SCORE_RANGES,
    ScoredRow,
    ScoreFile,
    check_finished,
    file_signature,
    json_rows,
    parsed_signature,
    row_key,
    row_score,
)
from story_quality.score_file.resume import read_sealed_rows, refuse_other_input
from story_quality.score_file.rows import (
    HASH_DIGITS,
    IDENTITY_FIELDS,
    INPUT_ROWS,
    ROW_HASH,
    ROW_START,
    TEXT_HASH,
    ScoreFileError,
    row_identity,
    row_intact,
    seal,
    text_hash,
)

__all__ = [
    "HASH_DIGITS",
    "IDENTITY_FIELDS",
    "INPUT_ROWS",
    "ROW_HASH",
    "ROW_START",
    "SCORE_RANGES",
    "TEXT_HASH",
    "ScoreFile",
    "ScoreFileError",
    "ScoredRow",
    "being_written",
    "check_finished",
    "check_folder",
    "claim_output",
    "file_signature",
    "json_rows",
    "lock_path",
    "parsed_signature",
    "read_sealed_rows",
    "refuse_inputs",
    "refuse_other_input",
    "refuse_unusable_name",
    "row_identity",
    "row_intact",
    "row_key",
    "row_score",
    "same_file",
    "seal",
    "text_hash",
]
