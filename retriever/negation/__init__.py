"""Negation: NegEx-style rules, negation scopes for lexical search, and sentence pairs that differ only in negation."""
