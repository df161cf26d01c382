"""Extraction: noun-phrase candidates (spaCy) ranked by KeyBERT on the packaged model, cached."""
