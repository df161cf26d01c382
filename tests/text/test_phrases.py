"""The phrase keys' memos (`kg.text.phrases.clear_caches`): a build empties them once its concepts are made."""

from kg.text.phrases import _strip, _word_key, clear_caches, normalize_phrase


def test_clear_caches_empties_the_memos_and_the_keys_stay_the_same():
    key = normalize_phrase("Zeroth-Order Optimisation techniques")
    assert normalize_phrase.cache_info().currsize and _strip.cache_info().currsize and _word_key.cache_info().currsize
    clear_caches()
    assert [f.cache_info().currsize for f in (normalize_phrase, _strip, _word_key)] == [0, 0, 0]
    assert normalize_phrase("Zeroth-Order Optimisation techniques") == key == "zeroth order optimization technique"
