"""The catalogue's fixtures, defined in `hostile_cases` (a module name no other suite uses, so test modules
import its helpers unambiguously) and made visible to pytest here."""

from hostile_cases import cli, good_results, inputs, results  # noqa: F401
