"""Certificates for the audit's verdicts (issue 32): placeholder, filled below."""
