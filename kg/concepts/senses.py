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
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

__all__ = ["SENSE_MARGIN", "SENSE_PRIOR", "SENSE_THRESHOLD", "SensePlan", "choose_senses", "document_frequencies",
           "profile_vectors", "sense_scores", "supported", "text_bag"]

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
    paper with no text is left out. `choose_senses` decides from these.

    The steps (`SensePlan`, `document_frequencies`, `profile_vectors`, `SensePlan.profiles`,
    `SensePlan.score`) each read the texts of some papers only, so that the partitions of a build
    can run them where their texts are, the client adding what they give (kg.concepts.merge)."""
    with_text = {pid for pid, text in texts.items() if text}
    plan = SensePlan.of(uses, defined, with_text.__contains__)
    if not plan.uses:
        return {}
    idf = plan.idf(document_frequencies(plan.needed, texts))
    profiles = plan.profiles(profile_vectors(plan, idf, texts))
    return plan.score(plan.uses, idf, profiles, texts, prior=prior)


@dataclass(frozen=True)
class SensePlan:
    """What scoring the senses of acronym *uses* ((short-form key, paper id), sorted, each in a paper with
    text and of a key some papers define) needs: each key's long forms with the papers that define it so
    (*counts*) and the first `PROFILE_PAPERS` of them with text, by id (*profile_ids*), and every paper
    whose text is read (*needed*: the users and the profile papers); and each profile paper's keys (*profile_of*)."""

    uses: tuple[tuple[str, str], ...]
    counts: Mapping[str, Mapping[str, int]]
    profile_ids: Mapping[str, Mapping[str, list[str]]]
    needed: frozenset[str]
    profile_of: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, uses: Iterable[tuple[str, str]], defined: Mapping[str, Mapping[str, Sequence[str]]],
           has_text) -> SensePlan:
        """The plan of *uses* ((paper id, short-form key)) given *defined* (as `sense_scores` takes it)
        and *has_text* (paper id -> whether it has a text)."""
        uses = tuple(sorted({(key, pid) for pid, key in uses if key in defined and has_text(pid)}))
        keys = {key for key, _ in uses}
        profile_ids = {key: {long: [p for p in sorted(pids) if has_text(p)][:PROFILE_PAPERS] for long, pids in defined[key].items()}
                       for key in keys}
        counts = {key: {long: len(pids) for long, pids in defined[key].items()} for key in keys}
        profile_of: dict[str, dict[str, None]] = {}
        for key, longs in profile_ids.items():
            for pids in longs.values():
                for p in pids:
                    profile_of.setdefault(p, {})[key] = None
        needed = {pid for _, pid in uses} | profile_of.keys()
        return cls(uses, counts, profile_ids, frozenset(needed), {p: tuple(keys) for p, keys in profile_of.items()})

    def idf(self, df: Mapping[str, int]) -> dict[str, float]:
        """The idf of each word from its document frequency *df* over the `needed` texts."""
        n = len(self.needed)
        return {w: math.log((n + 1) / (d + 1)) + 1.0 for w, d in df.items()}

    def profiles(self, vectors: Mapping[tuple[str, str], Mapping[str, float]]) -> dict[tuple[str, str], dict[str, float]]:
        """(key, long form) -> its profile: the mean of its profile papers' *vectors* ((key, paper id) ->
        `profile_vectors`), added in the order of the papers' ids."""
        return {(key, long): _mean([vectors[(key, p)] for p in pids])
                for key, longs in self.profile_ids.items() for long, pids in longs.items()}

    def score(self, uses: Iterable[tuple[str, str]], idf: Mapping[str, float], profiles, texts: Mapping[str, str], *,
              prior: float | None = None) -> dict[tuple[str, str], tuple[str, float, float, bool]]:
        """`sense_scores` of the *uses* ((key, paper id) of the plan's) whose papers' *texts* are given."""
        prior = SENSE_PRIOR if prior is None else prior
        scored: dict[tuple[str, str], tuple[str, float, float, bool]] = {}
        for key, group in groupby(sorted(uses), key=itemgetter(0)):
            drop = key.lower()
            longs = sorted(self.counts[key])
            weight = {long: math.log(self.counts[key][long]) for long in longs}  # the prior: how many papers define it so
            for _, pid in group:
                own = _vector(text_bag(texts[pid]), idf, drop)
                ranked = sorted(((cosine + prior * weight[long], cosine, long) for long in longs
                                 for cosine in [_cosine(own, profiles[(key, long)])]), key=lambda s: (-s[0], s[2]))
                top, best, long = ranked[0]
                lead = top - ranked[1][0] if len(ranked) > 1 else top
                scored[(pid, key)] = (long, best, lead, _writes(texts[pid], long))  # only the first-ranked matters
        return scored


def document_frequencies(pids: Iterable[str], texts: Mapping[str, str]) -> Counter:
    """How many of the texts of *pids* found in *texts* have each word (`text_bag`): one pass, so
    that memory stays bounded by one text's words."""
    df: Counter = Counter()
    for pid in pids:
        text = texts.get(pid)
        if text is not None:
            df.update(text_bag(text).keys())
    return df


def profile_vectors(plan: SensePlan, idf: Mapping[str, float], texts: Mapping[str, str]) -> dict[tuple[str, str], dict[str, float]]:
    """(key, paper id) -> the tf-idf vector of each profile paper of the *plan* found in *texts*, the key's
    own word left out."""
    out = {}
    for pid, text in texts.items():
        for key in plan.profile_of.get(pid, ()):
            out[(key, pid)] = _vector(text_bag(text), idf, key.lower())
    return out


def choose_senses(uses: Iterable[tuple[str, str]], defined: Mapping[str, Mapping[str, Sequence[str]]],
                  texts: Mapping[str, str], *, threshold: float = SENSE_THRESHOLD,
                  margin: float = SENSE_MARGIN) -> dict[tuple[str, str], str]:
    """(paper id, short-form key) -> the long-form key the paper's text supports (`sense_scores`: the
    best-ranked long form, if the paper writes it out, or its cosine is at least *threshold* and it
    leads the next by *margin*), for each use of an acronym the paper does not define that some
    papers do; a use with no support is left out."""
    return supported(sense_scores(uses, defined, texts), threshold=threshold, margin=margin)


def supported(scores: Mapping[tuple[str, str], tuple[str, float, float, bool]], *, threshold: float = SENSE_THRESHOLD,
              margin: float = SENSE_MARGIN) -> dict[tuple[str, str], str]:
    """The long form of each use of *scores* (`sense_scores`) its paper's text supports: written out, or
    a cosine of at least *threshold* leading the next by *margin*."""
    return {use: long for use, (long, best, lead, written) in scores.items() if written or (best >= threshold and lead >= margin)}
