"""Reading tables from files.

``readers``: CSV, TSV, JSON and JSON lines; ``text``: encodings and binary checks;
``workbooks``: Excel.
"""
