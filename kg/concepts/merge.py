"""Concepts: keyphrases normalized and merged so that papers about one thing meet at one node.

Variants that merge: case, singular/plural (of the head noun), hyphen/space, British/American
spelling, and an acronym with its expansion where its paper defines it, or where other papers define
it and the paper's text supports that long form (``LLMs`` in a paper about prompting joins ``large
language models (LLMs)`` defined in others; ``FID`` of an image generator does not join the
``feature importance disparity (FID)`` of a fairness paper: `kg.concepts.senses`); then
near-duplicates: keys that are one word once written apart and once together (``fine tuning`` /
``finetuning``), and keys that differ in one word that is a variant of the other (``graph
convolution network`` / ``graph convolutional network``, ``deep nets`` / ``deep networks``)
when their label embeddings agree (cosine >= `NEAR_DUPLICATE_THRESHOLD`, chosen on
``tests/data/concept_pairs.tsv``; ``docs/model.md`` has the curve).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import attrgetter

from kg.common.processes import Beside
from kg.concepts.acronyms import (
    acronym_synonyms,
    acronym_votes,
    defining_papers,
    expand_acronyms,
    local_definitions,
    phrase_key,
    representatives,
    resolve_acronyms,
)
from kg.concepts.hierarchy import broader_keys
from kg.concepts.instances import named_instances
from kg.concepts.model import Concept, ConceptIndex, concept_slug
from kg.concepts.senses import choose_senses
from kg.concepts.variants import (
    NEAR_DUPLICATE_THRESHOLD,
    SYNONYM_THRESHOLD,
    variant_groups,
)
from kg.text.acronyms import is_acronym
from kg.text.noise import is_trimmed, trim_label
from kg.text.phrases import normalize_phrase

__all__ = ["merge_concepts"]


def _parsed(extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]]) -> dict[str, str | list[str]]:
    """Each distinct phrase's `phrase_key`: its key when it has no acronym to expand (most phrases,
    the same in every paper), else its tokens (expanded paper by paper)."""
    parsed: dict[str, str | list[str]] = {}
    for _, phrases, _ in extractions:
        for phrase in phrases:
            if phrase not in parsed:
                key, tokens = phrase_key(phrase)
                parsed[phrase] = tokens if key is None else key
    return parsed


def _keys(extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]], parsed: Mapping[str, str | list[str]],
          senses: Callable[[str, str], str | None]):
    """Each (paper id, phrase)'s key (*parsed*; an acronym expanded by the paper's own definitions,
    else by *senses*: (paper id, short-form key) -> long-form key); each key's surface forms with
    their uses and its papers; and each defined long form's key with the labels it gives (the long
    form and the acronym)."""
    surfaces: dict[str, dict[str, int]] = {}  # key -> its surface forms and their uses
    long_forms: dict[str, dict[str, None]] = defaultdict(dict)
    papers: dict[str, dict[str, None]] = {}
    of_key: dict[str, tuple[dict[str, int], dict[str, None]]] = {}  # key -> (its surfaces, its papers)
    keys: dict[tuple[str, str], str] = {}
    for pid, phrases, defs in extractions:
        local = local_definitions(defs)
        for short, long in defs:  # the defined long form, and the acronym, are labels of the concept
            forms = long_forms[normalize_phrase(long)]
            forms[long if any(map(is_acronym, long.split())) else long.lower()] = None
            forms[short] = None
        for phrase in phrases:
            was = False
            key = parsed[phrase]
            if not isinstance(key, str):  # its tokens: it has an acronym
                expanded, was = expand_acronyms(key, local, partial(senses, pid))
                key = normalize_phrase(expanded)
            if not key:
                continue
            keys[(pid, phrase)] = key
            entry = of_key.get(key)
            if entry is None:
                entry = of_key[key] = surfaces[key], papers[key] = {}, {}
            forms, key_papers = entry
            forms[phrase] = forms.get(phrase, 0) + 1
            if was:
                forms.setdefault(expanded, 0)  # a form of the concept, not a use
            key_papers[pid] = None
    return keys, surfaces, papers, long_forms


def _index(ordered: Sequence[str], surfaces: Mapping[str, dict[str, int]], papers: Mapping[str, dict[str, None]],
           alias: Mapping[str, str], keys: Mapping[tuple[str, str], str]) -> ConceptIndex:
    """The `ConceptIndex` of the keys left after the merge (*ordered*: every key, sorted; *alias*:
    a merged key -> the one it joined), each labelled by its preferred surface form, with the
    broader concepts `broader_keys` finds."""
    found = []  # (id, key, label, alt labels, papers) of each concept, by key
    ids: dict[str, str] = {}
    for key in ordered:
        forms = surfaces.get(key)
        if forms is None:  # merged into another
            continue
        forms = _trimmed(forms) or {key: 0}
        if len(forms) == 1:  # (most keys)
            (label,), alt = forms, ()
        else:
            label = _preferred_label(forms)
            alt = tuple(sorted([f for f in forms if f != label]))
        ids[key] = cid = concept_slug(key)
        found.append((cid, key, label, alt, tuple(papers[key])))
    for key, into in alias.items():
        ids[key] = ids[into]
    assignment = {pk: ids[key] for pk, key in keys.items()}
    parent, implied = broader_keys([(key, label, ps) for _, key, label, _, ps in found])
    concepts = []
    for cid, key, label, alt, ps in found:
        up = parent.get(key)
        concepts.append(Concept(cid, key, label, alt, ps, (concept_slug(up),) if up else ()))
    for head in implied:
        up = parent.get(head)
        concepts.append(Concept(concept_slug(head), head, head, (), (), (concept_slug(up),) if up else ()))
    return ConceptIndex(tuple(sorted(concepts, key=attrgetter("id"))), assignment)


def merge_concepts(
    extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]],
    *,
    embed: Callable[[list[str]], object] | None = None,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    synonym_threshold: float | None = None,
    texts: Mapping[str, str] | None = None,
    beside: Beside | None = None,
) -> ConceptIndex:
    """Merge the keyphrases of every paper into concepts.

    *extractions* holds, per paper, (paper id, its keyphrases best first, the acronym
    definitions its text makes). Returns the concepts sorted by id and the concept each
    (paper id, phrase) joined. *embed* (texts -> unit-length rows, the model keyphrases were
    ranked with) lets near-duplicate keys merge when their cosine is at least *threshold*
    (`variant_groups`), and synonyms (a class noun more, *synonym_threshold*; two expansions of
    one acronym that differ in a word, `acronym_synonyms`); without it only keys written apart /
    together merge. *texts* (paper id -> its text) lets a word join the word plus the noun of
    what the texts say it names (`named_instances`: "adam" / "adam optimizer"; *beside*, a
    `kg.common.processes.Beside`, may read half of the texts there).
    """
    synonym_threshold = SYNONYM_THRESHOLD if synonym_threshold is None else synonym_threshold
    votes = acronym_votes((pid, defs) for pid, _, defs in extractions)
    same = acronym_synonyms(votes, embed=embed, threshold=synonym_threshold) if embed is not None else []
    weight: dict[str, int] = defaultdict(int)  # each long form key -> the definitions that give it
    for counter in votes.values():
        for long, n in counter.items():
            weight[long] += n
    parsed = _parsed(extractions)
    keys, surfaces, papers, long_forms = _keys(extractions, parsed, _senses(extractions, parsed, representatives(same, weight), texts))
    alias: dict[str, str] = {}
    ordered = sorted(surfaces)
    if texts:
        same = same + named_instances(ordered, texts.values(), beside=beside)
    for group in variant_groups(ordered, embed=embed, threshold=threshold, synonym_threshold=synonym_threshold, same=same):
        # the key of the group: the one with most papers, then most uses, then the shortest
        into, *others = sorted(group, key=lambda k: (-len(papers[k]), -sum(surfaces[k].values()), len(k), k))
        for key in others:
            forms = surfaces[into]
            for form, n in surfaces.pop(key).items():  # count-0 forms too
                forms[form] = forms.get(form, 0) + n
            papers[into].update(papers.pop(key))
            alias[key] = into
    for key, long_labels in long_forms.items():  # (after the variants merge: a long form may have joined another key)
        forms = surfaces.get(alias.get(key, key))
        if forms is not None:
            for form in long_labels:
                forms.setdefault(form, 0)
    return _index(ordered, surfaces, papers, alias, keys)


def _senses(extractions, parsed: Mapping[str, str | list[str]], same: Mapping[str, str],
            texts: Mapping[str, str] | None) -> Callable[[str, str], str | None]:
    """(paper id, short-form key) -> the long-form key of an acronym the paper uses without defining
    it: the one its text supports among those other papers define (`choose_senses`), long forms
    that *same* joins counted as one; without *texts*, the corpus's where two thirds of its
    definitions agree (`resolve_acronyms`)."""
    if texts is None:
        corpus = resolve_acronyms(((pid, defs) for pid, _, defs in extractions), same=same)
        return lambda pid, key: corpus.get(key)
    uses: set[tuple[str, str]] = set()  # (paper id, short-form key) of each acronym left to another paper's long form
    for pid, phrases, defs in extractions:
        local = local_definitions(defs)
        for phrase in phrases:
            tokens = parsed[phrase]
            if not isinstance(tokens, str):
                expand_acronyms(tokens, local, lambda key, pid=pid: uses.add((pid, key)))
    defined = defining_papers(((pid, defs) for pid, _, defs in extractions), same)
    chosen = choose_senses(uses, defined, texts)
    return lambda pid, key: chosen.get((pid, key))


def _trimmed(forms: Mapping[str, int]) -> dict[str, int]:
    """The surface forms of a concept with no stray signs at their ends (`trim_label`): a form cut
    from text may carry one ("reinforcement learning~", "large language models'"); forms that
    become one add their uses, and one that is nothing but signs goes."""
    if all(map(is_trimmed, forms)):  # (most concepts)
        return dict(forms)
    out: dict[str, int] = {}
    for form, n in forms.items():
        if trimmed := trim_label(form):
            out[trimmed] = out.get(trimmed, 0) + n
    return out


def _preferred_label(forms: Mapping[str, int]) -> str:
    """The most used surface form, preferring a spelled-out form over an acronym."""

    def rank(item):
        form, n = item
        acronym_words = sum(is_acronym(w) for w in form.split())
        return (acronym_words, -n, form != form.lower(), "-" not in form, len(form), form)

    return sorted(forms.items(), key=rank)[0][0]
