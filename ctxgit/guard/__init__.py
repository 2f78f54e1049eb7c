"""Policy on the context's repository, above the plumbing: ``install`` (the repository
as ctx needs it: hook, merge driver, ignore lines) and ``trust`` (require-signed)."""
