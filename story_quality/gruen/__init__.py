"""GRUEN: the four aspects of linguistic quality (the library under metrics/gruen)."""
