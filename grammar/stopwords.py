"""English stop words for ``stopwords='en'``: frequent words dropped from full-text queries (outside
phrases). The list is the common English function words (articles, pronouns, auxiliaries,
prepositions, conjunctions); words that carry meaning in a technical manual (``not``, ``no``,
``all``, ``off``, ``on``) are kept out of it so that queries such as ``not_terms_only_allowed`` or
``binlog off`` still find them."""
from __future__ import annotations

ENGLISH = frozenset("""
a about above after again against am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself nor of once only or other our ours ourselves out over own same she should so some such
than that the their theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your yours
yourself yourselves
""".split())

LISTS = {"en": ENGLISH}
