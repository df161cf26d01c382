"""Acronym senses: which of the corpus's long forms an acronym stands for in a paper that uses it
without defining it.

One paper's definition says nothing about another's acronym ("FID" is a fairness metric in one
abstract and Frechet inception distance in the next; "GPS" a graph transformer, "GPs" Gaussian
processes). So a long form some papers define is given to a paper that does not define the acronym
only on evidence from that paper's own text:

the acronym's long forms rank by the tf-idf cosine of the paper and of the mean of the papers that
define each, plus `SENSE_PRIOR` times the log of how many define it (a long form one paper gives must
fit far better than one hundreds give); the first is taken if the paper writes it out (its words in
order), or its cosine is at least `SENSE_THRESHOLD` and it leads the next by `SENSE_MARGIN`.

Otherwise the acronym stays its own concept. The threshold and margin were chosen on the
definitions of half the shared ML abstracts predicting the other half's, definitions hidden, and
checked on a hand-labelled set (``python -m benchmarks.acronyms``; docs/concepts.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from operator import itemgetter

__all__ = ["SENSE_MARGIN", "SENSE_PRIOR", "SENSE_THRESHOLD", "choose_senses", "sense_scores", "text_bag"]

SENSE_THRESHOLD = 0.12
SENSE_MARGIN = 0.04
SENSE_PRIOR = 0.02
PROFILE_PAPERS = 100  # defining papers a long form's profile is the mean of (the first, by id)

_WORD = re.compile(r"[a-z][a-z0-9]+")
# Words every abstract has: no evidence of what it is about (idf would weigh them little; gone, they cost nothing)
_STOP = frozenset("""
about above across after again against all also although among and any are as at based be because been before
being below between both but by can could did does doing done during each either etc even ever every few for
from further given had has have having here how however into its itself just less many may more most much must
not now of off often on once one only onto other our ours out over own per rather same several she should show
shown shows since some such than that the their theirs them then there these they this those though through
thus to too two under until upon use used uses using very via was way we well were what when where whether which
while who whom whose why will with within without would yet you your paper propose proposed approach method
methods new results result work also first second three
""".split())


def _singular(word: str) -> str:
    """A word with a final s dropped (most plurals), as `text_bag` and `_words` count it."""
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def text_bag(text: str) -> Counter:
    """The content words of *text*, lower case, `_singular`, with their counts."""
    return Counter([w[:-1] if w[-1] == "s" and len(w) > 3 else w  # `_singular`, inline: a call per word costs more
                    for w in _WORD.findall(text.lower()) if w not in _STOP])


_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _words(text: str) -> list[tuple[str, bool]]:
    """The words of *text* as `text_bag` spells them, each with whether it starts a token
    (``self-supervised`` gives ``self`` and ``supervised``, joined)."""
    out = []
    for token in _TOKEN.findall(text.lower()):
        for i, w in enumerate(token.split("-")):
            out.append((_singular(w), i == 0))
    return out


def _vector(bag: Mapping[str, int], idf: Mapping[str, float], drop: str) -> dict[str, float]:
    vec = {w: (1.0 + math.log(n)) * idf[w] for w, n in bag.items() if w != drop}
    norm = math.sqrt(sum(x * x for x in vec.values())) or 1.0
    return {w: x / norm for w, x in vec.items()}


def _mean(vectors: Sequence[Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for vec in vectors:
        for w, x in vec.items():
            out[w] = out.get(w, 0.0) + x
    norm = math.sqrt(sum(x * x for x in out.values())) or 1.0
    return {w: x / norm for w, x in out.items()}


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(w, 0.0) for w, x in a.items())


def _written(words: Sequence[tuple[str, bool]], long: str) -> bool:
    """Whether the words of *long* stand in *words* one after another, as whole tokens
    ("supervised learning" is not written in "self-supervised learning")."""
    want = [w for w, _ in _words(long)]
    n = len(want)
    if not n:
        return False
    first = want[0]
    for i, (w, starts) in enumerate(words):
        if w == first and starts and [x for x, _ in words[i:i + n]] == want and (i + n == len(words) or words[i + n][1]):
            return True
    return False


def _writes(text: str, long: str) -> bool:
    """`_written` of *text*'s words, which are read only when every word of *long* is in the text's
    lower case: a word of `_words` is a prefix of a token of it (most texts do not write the long
    form, and reading a text's words costs far more)."""
    lower = text.lower()
    if not all(w in lower for w, _ in _words(long)):
        return False
    return _written(_words(text), long)


def sense_scores(uses: Iterable[tuple[str, str]], defined: Mapping[str, Mapping[str, Sequence[str]]],
                 texts: Mapping[str, str], *, prior: float | None = None) -> dict[tuple[str, str], tuple[str, float, float, bool]]:
    """(paper id, short-form key) -> (the best long form, its cosine, its lead over the next, whether
    the paper writes it out), for each use of an acronym (*uses*) that some papers define (*defined*:
    short-form key -> long-form key -> the ids of the papers that define it so). Long forms rank by
    cosine plus *prior* (`SENSE_PRIOR`) times the log of the papers that define them: one paper's
    "reinforcement learned (RL)" or "representation learning (RL)" must fit a paper far better than
    578 papers' reinforcement learning to win. *texts* maps paper ids to their text; a use in a
    paper with no text is left out. `choose_senses` decides from these."""
    prior = SENSE_PRIOR if prior is None else prior
    uses = sorted({(key, pid) for pid, key in uses if key in defined and texts.get(pid)})
    if not uses:
        return {}
    profile_ids = {key: {long: [p for p in sorted(pids) if texts.get(p)][:PROFILE_PAPERS] for long, pids in defined[key].items()}
                   for key in {key for key, _ in uses}}
    needed = {pid for _, pid in uses}
    for longs in profile_ids.values():
        for pids in longs.values():
            needed.update(pids)
    # Memory stays bounded by one acronym's papers: document frequencies in one pass, then each
    # acronym's long-form profiles and its uses, a text's words counted again where needed.
    df: Counter = Counter()
    for pid in needed:
        df.update(text_bag(texts[pid]).keys())
    n = len(needed)
    idf = {w: math.log((n + 1) / (d + 1)) + 1.0 for w, d in df.items()}
    del df
    scored: dict[tuple[str, str], tuple[str, float, float, bool]] = {}
    for key, group in groupby(uses, key=itemgetter(0)):
        drop = key.lower()
        longs = sorted(defined[key])
        profiles = {long: _mean([_vector(text_bag(texts[p]), idf, drop) for p in profile_ids[key][long]]) for long in longs}
        weight = {long: math.log(len(defined[key][long])) for long in longs}  # the prior: how many papers define it so
        for _, pid in group:
            own = _vector(text_bag(texts[pid]), idf, drop)
            ranked = sorted(((cosine + prior * weight[long], cosine, long) for long in longs
                             for cosine in [_cosine(own, profiles[long])]), key=lambda s: (-s[0], s[2]))
            top, best, long = ranked[0]
            lead = top - ranked[1][0] if len(ranked) > 1 else top
            scored[(pid, key)] = (long, best, lead, _writes(texts[pid], long))  # only the first-ranked matters
    return scored


def choose_senses(uses: Iterable[tuple[str, str]], defined: Mapping[str, Mapping[str, Sequence[str]]],
                  texts: Mapping[str, str], *, threshold: float = SENSE_THRESHOLD,
                  margin: float = SENSE_MARGIN) -> dict[tuple[str, str], str]:
    """(paper id, short-form key) -> the long-form key the paper's text supports (`sense_scores`: the
    best-ranked long form, if the paper writes it out, or its cosine is at least *threshold* and it
    leads the next by *margin*), for each use of an acronym the paper does not define that some
    papers do; a use with no support is left out."""
    return {use: long for use, (long, best, lead, written) in sense_scores(uses, defined, texts).items()
            if written or (best >= threshold and lead >= margin)}
