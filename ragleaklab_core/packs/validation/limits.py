"""The most a pack may hold; a test may lower them (they are read when a check runs)."""

#: The largest data file (or ``pack.toml``) a pack may ship: 64 MiB.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The largest document text, UTF-8 encoded: 1 MiB.
MAX_DOCUMENT_BYTES = 1024 * 1024
#: The most cases a pack may have.
MAX_CASES = 1_000_000
#: The most documents a pack may have.
MAX_DOCUMENTS = 1_000_000
