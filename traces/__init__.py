"""Trace format v1 (reader, writer, schema), synthetic generators, importers of real logs, samples."""
