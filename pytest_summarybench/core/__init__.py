"""The foundation every layer above shares: the project's words (``vocabulary``), its
errors and their exit codes (``errors``), its progress display, bounded reading of the
files a user gives (``input_files``), the bundled sample codebase, and the muting of
third-party warnings. Standard library and
small dependencies only; nothing here imports another part of the package."""
