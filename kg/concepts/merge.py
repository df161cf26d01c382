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

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter

from kg.common.processes import Beside
from kg.common.rounds import LocalRounds, Rounds
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
from kg.concepts.instances import SPLIT_FROM, instance_candidates, named_instances, said_instances
from kg.concepts.model import Concept, ConceptIndex, concept_slug
from kg.concepts.senses import SensePlan, document_frequencies, profile_vectors, supported
from kg.concepts.variants import (
    NEAR_DUPLICATE_THRESHOLD,
    SYNONYM_THRESHOLD,
    variant_groups,
)
from kg.text.acronyms import is_acronym
from kg.text.noise import is_trimmed, trim_label
from kg.text.phrases import normalize_phrase

__all__ = ["MergePart", "merge_concepts", "merge_parts", "merge_rounds", "part_definitions", "part_frequencies", "part_instances",
           "part_keys", "part_parsed", "part_profiles", "part_senses", "part_uses"]


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


def _index(ordered: Sequence[str], surfaces: Mapping[str, dict[str, int]], papers: dict[str, dict[str, None]],
           alias: Mapping[str, str], keys: dict[tuple[str, str], str]) -> ConceptIndex:
    """The `ConceptIndex` of the keys left after the merge (*ordered*: every key, sorted; *alias*:
    a merged key -> the one it joined), each labelled by its preferred surface form, with the
    broader concepts `broader_keys` finds. Takes *papers* and *keys* apart to make it: each key's
    papers become its concept's, and *keys* (a (paper, phrase) -> its key) becomes the assignment
    (its concept), not a second table of that size beside it."""
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
        found.append((cid, key, label, alt, tuple(papers.pop(key))))
    for key, into in alias.items():
        ids[key] = ids[into]
    for pk, key in keys.items():  # (values replaced, no key added: the dict may change as it is read)
        keys[pk] = ids[key]
    assignment = keys
    parent, implied = broader_keys([(key, label, ps) for _, key, label, _, ps in found])
    concepts = []
    for cid, key, label, alt, ps in found:
        up = parent.get(key)
        concepts.append(Concept(cid, key, label, alt, ps, (concept_slug(up),) if up else ()))
    for head in implied:
        up = parent.get(head)
        concepts.append(Concept(concept_slug(head), head, head, (), (), (concept_slug(up),) if up else ()))
    return ConceptIndex(tuple(sorted(concepts, key=attrgetter("id"))), assignment)


@dataclass(frozen=True)
class MergePart:
    """One partition of the corpus as the merge reads it: each paper's (id, keyphrases best first, the
    acronym definitions its text makes), and the papers' *texts* (paper id -> text; None: not read)."""

    extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]]
    texts: Mapping[str, str] | None = None


def merge_parts(extractions, texts: Mapping[str, str] | None, size: int | None) -> list[MergePart]:
    """*extractions* (and their *texts*) in partitions of *size* papers, in order (None: one)."""
    extractions = list(extractions)
    size = size or max(1, len(extractions))
    parts = []
    for start in range(0, len(extractions), size):
        chunk = extractions[start:start + size]
        parts.append(MergePart(chunk, None if texts is None else {pid: texts[pid] for pid, _, _ in chunk if pid in texts}))
    return parts


def merge_concepts(
    extractions: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]],
    *,
    embed: Callable[[list[str]], object] | None = None,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    synonym_threshold: float | None = None,
    texts: Mapping[str, str] | None = None,
    beside: Beside | None = None,
    partition_size: int | None = None,
    rounds: Rounds | None = None,
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
    `kg.common.processes.Beside`, may read half of the partitions there).

    The papers are read in partitions of *partition_size* (None: one), each pass over them a map
    whose results are added in partition order (`merge_rounds`, where *rounds* runs them): the result
    depends neither on the size nor on where they run (docs/design.md, "Why the stages after extraction
    run in rounds over partitions").
    """
    return merge_rounds(merge_parts(extractions, texts, partition_size), embed=embed, threshold=threshold,
                        synonym_threshold=synonym_threshold, beside=beside, rounds=rounds)


def merge_rounds(parts: Sequence[MergePart], *, embed: Callable[[list[str]], object] | None = None,
                 threshold: float = NEAR_DUPLICATE_THRESHOLD, synonym_threshold: float | None = None,
                 beside: Beside | None = None, rounds: Rounds | None = None) -> ConceptIndex:
    """`merge_concepts` of the papers of *parts*: each round maps every partition (a function of the
    partition and of tables about keys, never about another partition's papers) and adds the
    results in partition order; the decisions about keys (acronym synonyms, near-duplicates,
    labels, broader concepts) are made once, on those tables. *rounds* (`kg.common.rounds.Rounds`;
    by default this process) says where the partitions are held and the rounds run."""
    rounds = rounds or LocalRounds()
    synonym_threshold = SYNONYM_THRESHOLD if synonym_threshold is None else synonym_threshold
    read = bool(parts) and all(part.texts is not None for part in parts)
    handles = rounds.place(parts)
    definitions = [row for found in rounds.map(part_definitions, handles) for row in found]  # (paper id, definitions, has text)
    votes = acronym_votes((pid, defs) for pid, defs, _ in definitions)
    same = acronym_synonyms(votes, embed=embed, threshold=synonym_threshold) if embed is not None else []
    weight: dict[str, int] = defaultdict(int)  # each long form key -> the definitions that give it
    for counter in votes.values():
        for long, n in counter.items():
            weight[long] += n
    joined = representatives(same, weight)
    parsed = rounds.keep(part_parsed, handles)  # each partition's phrases parsed once, for its uses and its keys
    if read:
        found = rounds.map(part_keys, handles, parsed, _chosen_senses(rounds, handles, parsed, definitions, joined))
    else:
        found = rounds.map(part_keys, handles, parsed, corpus=resolve_acronyms(((pid, defs) for pid, defs, _ in definitions), same=joined))
    keys, surfaces, papers, long_forms = _added(found)
    del found
    alias: dict[str, str] = {}
    ordered = sorted(surfaces)
    if read:
        same = same + _instances(rounds, handles, ordered, beside)
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


def part_definitions(part: MergePart) -> list[tuple[str, tuple[tuple[str, str], ...], bool]]:
    """Round 1: the (paper id, acronym definitions, whether it has a text) of the papers of *part* that define some."""
    texts = part.texts or {}
    return [(pid, tuple(defs), bool(texts.get(pid))) for pid, _, defs in part.extractions if defs]


def part_parsed(part: MergePart) -> dict[str, str | list[str]]:
    """Each distinct phrase of *part* parsed (`phrase_key`), kept with the partition for rounds 2 and 6."""
    return _parsed(part.extractions)


def part_uses(part: MergePart, parsed: Mapping[str, str | list[str]], *, defined: Collection[str]) -> list[tuple[str, str]]:
    """Round 2: the (paper id, short-form key) of each acronym a paper of *part* with a text uses without
    defining it, of the keys some papers define (*defined*); *parsed*: the partition's `part_parsed`."""
    texts = part.texts or {}
    uses: set[tuple[str, str]] = set()
    for pid, phrases, defs in part.extractions:
        if not texts.get(pid):
            continue
        local = local_definitions(defs)
        for phrase in phrases:
            tokens = parsed[phrase]
            if not isinstance(tokens, str):
                expand_acronyms(tokens, local, lambda key, pid=pid: uses.add((pid, key)) if key in defined else None)
    return sorted(uses)


def part_frequencies(part: MergePart, *, needed: Collection[str]) -> Counter:
    """Round 3: the document frequencies (`kg.concepts.senses.document_frequencies`) of the texts of *part* in *needed*."""
    return document_frequencies([pid for pid in part.texts if pid in needed], part.texts)


def part_profiles(part: MergePart, *, plan: SensePlan, idf: Mapping[str, float]) -> dict[tuple[str, str], dict[str, float]]:
    """Round 4: the vectors of the profile papers of *part* (`kg.concepts.senses.profile_vectors`)."""
    return profile_vectors(plan, idf, part.texts)


def part_senses(part: MergePart, uses: Sequence[tuple[str, str]], *, plan: SensePlan, idf: Mapping[str, float],
                profiles: Mapping) -> dict[tuple[str, str], str]:
    """Round 5: the long form each acronym use of *part* (*uses*: its round-2 uses) takes, (paper id, short-form key) -> long-form key."""
    return supported(plan.score([(key, pid) for pid, key in uses], idf, profiles, part.texts))


def _chosen_senses(rounds: Rounds, handles: Sequence, parsed: Sequence, definitions, same: Mapping[str, str]) -> list:
    """Each partition's acronym senses (`choose_senses`), kept where the partition is: the uses
    (round 2), the document frequencies of the texts read (3), the profile papers' vectors (4),
    each use scored where its text is (5)."""
    defined = defining_papers(((pid, defs) for pid, defs, _ in definitions), same)
    uses = rounds.map(part_uses, handles, parsed, defined=frozenset(defined))
    with_text = {pid for pid, _, has in definitions if has} | {pid for found in uses for pid, _ in found}
    plan = SensePlan.of([u for found in uses for u in found], defined, with_text.__contains__)
    if not plan.uses:
        return [{} for _ in handles]
    df: Counter = Counter()
    for found in rounds.map(part_frequencies, handles, needed=plan.needed):
        df.update(found)
    idf = plan.idf(df)
    vectors: dict[tuple[str, str], dict[str, float]] = {}
    for found in rounds.map(part_profiles, handles, plan=plan, idf=idf):
        vectors.update(found)
    return rounds.keep(part_senses, handles, uses, plan=plan, idf=idf, profiles=plan.profiles(vectors))


def part_keys(part: MergePart, parsed: Mapping[str, str | list[str]], senses: Mapping | None = None, *,
              corpus: Mapping | None = None):
    """Round 6: `_keys` of the papers of *part* (*parsed*: its `part_parsed`), an acronym a paper does not
    define expanded by *senses* ((paper id, short-form key) -> long-form key, its round 5) or else by the
    *corpus*'s (short-form key -> long-form key, when no text is read)."""
    if senses is not None:
        sense = lambda pid, key: senses.get((pid, key))  # noqa: E731
    else:
        sense = lambda pid, key: (corpus or {}).get(key)  # noqa: E731
    return _keys(part.extractions, parsed, sense)


def part_instances(part: MergePart, *, wanted: Mapping[str, Sequence[str]]) -> set[tuple[str, str]]:
    """Round 7: the named instances of *wanted* the texts of *part* state (`kg.concepts.instances.said_instances`)."""
    return said_instances(wanted, part.texts.values())


def _added(found):
    """The `_keys` of every partition as one: each (paper id, phrase)'s key, each key's surface forms
    (uses added) and papers, and each long form's labels, in partition order."""
    keys: dict[tuple[str, str], str] = {}
    surfaces: dict[str, dict[str, int]] = {}
    papers: dict[str, dict[str, None]] = {}
    long_forms: dict[str, dict[str, None]] = {}
    for part_keys_, part_surfaces, part_papers, part_long_forms in found:
        keys.update(part_keys_)
        for key, forms in part_surfaces.items():
            known = surfaces.get(key)
            if known is None:
                surfaces[key], papers[key] = forms, part_papers[key]
            else:
                for form, n in forms.items():
                    known[form] = known.get(form, 0) + n
                papers[key].update(part_papers[key])
        for key, labels in part_long_forms.items():
            long_forms.setdefault(key, {}).update(labels)
    return keys, surfaces, papers, long_forms


def _instances(rounds: Rounds, handles: Sequence, ordered: Sequence[str], beside: Beside | None) -> list[tuple[str, str]]:
    """`named_instances` of the keys *ordered*, each partition's texts read where they are (round 7);
    *beside* may read the later half of the partitions (or of one partition's texts) in this process's stead."""
    wanted = instance_candidates(ordered)
    if not wanted:
        return []
    later = None
    if beside is not None and isinstance(rounds, LocalRounds) and sum(len(h.texts) for h in handles) >= SPLIT_FROM:
        if len(handles) == 1:
            return named_instances(ordered, handles[0].texts.values(), beside=beside)
        half = len(handles) // 2
        rest = handles[half:]
        later, handles = beside(lambda: set().union(*rounds.map(part_instances, rest, wanted=wanted))), handles[:half]
    found = set().union(*rounds.map(part_instances, handles, wanted=wanted))
    if later is not None:
        found |= later.result()
    return sorted((stem, f"{stem} {noun}") for stem, noun in found)


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
