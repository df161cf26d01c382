"""Concepts: keyphrases normalized and merged (variants, acronyms, near duplicates), broader concepts."""
