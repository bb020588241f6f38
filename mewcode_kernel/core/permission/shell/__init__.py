"""Shell command analysis for permission checks: the lexer, the analysis of a
command line into the simple commands it runs (``analysis``), the built-in
catastrophic list (``danger``) and the engine's shell branch (``decide``)."""
