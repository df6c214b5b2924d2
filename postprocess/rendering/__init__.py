"""Showing the tables: the headline sections, report.md / report.html / report.json, the plots, the number formats,
and the generated column reference (docs/report-schema.md)."""
