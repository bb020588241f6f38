"""The search engine behind ``grep`` and ``glob``: gitignore-aware walking
(``ignore``), glob patterns (``globpat``), the query and result shared by the
ripgrep and pure-Python engines (``query``, ``prefilter``), and the dispatch
between them (``run.search``)."""
