"""Find NLTK's POS tagger and WordNet, or say once what is missing and what replaces it.

UNION's negative sampler used NLTK's averaged-perceptron tagger and WordNet, both
downloads (``nltk.download("averaged_perceptron_tagger_eng")``, ``nltk.download("wordnet")``).
Machines without them still build a corpus:

* tagger missing -> :func:`training.pos_heuristic.heuristic_pos_tag` (word lists + suffix rules);
* WordNet missing -> Debian/Ubuntu's ``wordnet-base`` package (``apt-get install wordnet-base``,
  the WordNet 3.0 database in ``/usr/share/wordnet``). NLTK 3.10 reads corpora only from
  folders on ``nltk.data.path`` and needs a ``lexnames`` file Debian omits, so a folder of
  copies of those files (about 30 MB) plus a generated ``lexnames`` is made in the user's cache and added
  to ``nltk.data.path``;
* neither -> no antonyms (substitution uses same-POS keywords only) and rule-based lemmas.
"""

from __future__ import annotations

import functools
import logging
import os
import pathlib
import tempfile
import warnings
import weakref
from typing import Any

import nltk
from nltk.corpus.reader.wordnet import WordNetCorpusReader

logger = logging.getLogger(__name__)

DEBIAN_WORDNET_DIR = "/usr/share/wordnet"
WORDNET_FILES = (
    *(f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")),
    *(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")),
)
# WordNet 3.0's 45 lexicographer files (number, name, syntactic category), see lexnames(5WN).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather "
    "adj.ppl"
).split()
_LEX_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_warned: set[str] = set()
# Every reader handed out here, so a forked child can drop the files its parent opened.
_readers: weakref.WeakSet[WordNetCorpusReader] = weakref.WeakSet()


def _drop_inherited_data_files() -> None:
    """In a forked child, close the WordNet data files the parent opened; each reopens on use.

    NLTK reads a synset with ``seek(offset)`` then ``readline()`` on one cached file per POS,
    and opens ``data.adj`` while the reader is made. A forked process shares an open file's
    position with its parent and siblings, so ``datasets.map(num_proc>1)`` workers moved each
    other's reads: "No WordNet synset found" at valid offsets, then a ``None`` synset.
    """
    for reader in _readers:
        for handle in reader._data_file_map.values():
            handle.close()  # this process's descriptor only; the parent's stays open
        reader._data_file_map.clear()


os.register_at_fork(after_in_child=_drop_inherited_data_files)


def warn_once(key: str, message: str) -> None:
    """Log a missing-resource message once per process (not once per story)."""
    if key not in _warned:
        _warned.add(key)
        logger.warning(message)


def lexnames_text() -> str:
    """The ``lexnames`` file NLTK's WordNet reader expects: ``NN<TAB>name<TAB>category`` lines."""
    return "".join(
        f"{i:02d}\t{name}\t{_LEX_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def default_cache_dir() -> pathlib.Path:
    root = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(root) / "story-quality-metrics" / "nltk_data"


@functools.lru_cache(maxsize=1)
def perceptron_tagger() -> Any | None:
    """NLTK's English averaged-perceptron tagger, or None (with one warning) when not installed."""
    try:
        nltk.data.find("taggers/averaged_perceptron_tagger_eng/")
    except LookupError:
        warn_once(
            "tagger",
            "NLTK's POS tagger is not installed (nltk.download('averaged_perceptron_tagger_eng')); "
            "using the rule-based fallback tagger of training/negatives/pos_heuristic.py.",
        )
        return None
    from nltk.tag import PerceptronTagger

    return PerceptronTagger(lang="eng")


@functools.lru_cache(maxsize=4)
def nltk_wordnet() -> Any | None:
    """WordNet as installed by ``nltk.download('wordnet')``, or None."""
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        try:
            nltk.data.find("corpora/wordnet.zip")
        except LookupError:
            return None
    from nltk.corpus import wordnet

    try:
        wordnet.ensure_loaded()
    except (OSError, LookupError):
        # What NLTK found is not a complete download: e.g. the copy of Debian's files that
        # debian_wordnet() put on nltk.data.path, which lacks the sense index NLTK's reader needs.
        return None
    _readers.add(wordnet)
    return wordnet


def debian_wordnet_root(
    debian_dir: str | os.PathLike, cache_dir: str | os.PathLike | None = None
) -> pathlib.Path:
    """Make (once) an NLTK-readable copy of a ``wordnet-base`` folder plus a ``lexnames`` file.

    Returns the ``nltk_data`` folder to put on ``nltk.data.path``; raises FileNotFoundError
    naming the missing file when ``debian_dir`` is not a WordNet 3.0 database.
    """
    source = pathlib.Path(debian_dir)
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{source} is not a WordNet database folder: {missing[0]} is missing")
    data_root = pathlib.Path(cache_dir) if cache_dir else default_cache_dir()
    target = data_root / "corpora" / "wordnet"
    target.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:  # copies: NLTK refuses links that resolve outside its data path
        copy = target / name
        if not copy.is_file() or copy.stat().st_size != (source / name).stat().st_size:
            _replace_atomically(copy, (source / name).read_bytes())
    lexnames = target / "lexnames"
    if not lexnames.exists() or lexnames.read_text() != lexnames_text():
        _replace_atomically(lexnames, lexnames_text().encode())
    return data_root


def _replace_atomically(path: pathlib.Path, content: bytes) -> None:
    """Write a sibling temporary file, then rename it over ``path``.

    Processes that make the copy at the same moment (``datasets.map`` workers, parallel
    jobs) must never see each other's half-written files; a rename is atomic, so a reader
    sees the old file or the whole new one. (The "no synset at a valid offset" crash with
    ``num_proc > 1`` had another cause: see ``_drop_inherited_data_files``.)
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise


class _DebianWordNet(WordNetCorpusReader):
    """WordNet 3.0 from Debian's files, without the sense-key map to other WordNet versions.

    NLTK builds that map (for the multilingual OMW data) from ``index.sense``, which
    ``wordnet-base`` does not ship; antonyms and lemmas do not need it.
    """

    def map_wn(self, version: str = "wordnet") -> None:
        return None


@functools.lru_cache(maxsize=4)
def debian_wordnet(debian_dir: str, cache_dir: str | None = None) -> Any | None:
    """WordNet read from Debian's ``wordnet-base`` files, or None when they are not there."""
    try:
        data_root = debian_wordnet_root(debian_dir, cache_dir)
    except FileNotFoundError:
        return None
    if str(data_root) not in nltk.data.path:
        nltk.data.path.append(str(data_root))
    with warnings.catch_warnings():  # "multilingual functions are not available": expected, no OMW
        warnings.simplefilter("ignore", UserWarning)
        reader = _DebianWordNet(str(data_root / "corpora" / "wordnet"), None)
    _readers.add(reader)
    return reader


def find_wordnet(preference: str = "auto", debian_dir: str = DEBIAN_WORDNET_DIR) -> tuple[Any | None, str]:
    """(reader, source) for ``preference`` in auto / nltk / debian / none; source says what was found.

    ``auto`` tries NLTK's download, then Debian's files, then gives up with one warning.
    An explicit ``nltk``/``debian`` that is not available is an error, not a silent downgrade.
    """
    if preference not in ("auto", "nltk", "debian", "none"):
        raise ValueError(f"wordnet must be one of auto, nltk, debian, none; got {preference!r}")
    if preference == "none":
        return None, "none"
    if preference in ("auto", "nltk"):
        reader = nltk_wordnet()
        if reader is not None:
            return reader, "nltk"
        if preference == "nltk":
            raise LookupError("NLTK's WordNet is not installed: run nltk.download('wordnet')")
    reader = debian_wordnet(str(debian_dir))
    if reader is not None:
        return reader, "debian"
    if preference == "debian":
        raise LookupError(f"No WordNet database in {debian_dir}: apt-get install wordnet-base")
    warn_once(
        "wordnet",
        "WordNet is not installed (neither nltk.download('wordnet') nor Debian's wordnet-base in "
        f"{debian_dir}): substitution will use no antonyms, lemmas come from suffix rules.",
    )
    return None, "none"
