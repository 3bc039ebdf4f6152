"""How scores agree with people and with each other: correlation, significance, annotations, comparing systems."""
