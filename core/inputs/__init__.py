"""Stage 1, inputs: the stack config's models and typed values, its cross-field rules, and the
catalog (configs/) they are checked against."""
