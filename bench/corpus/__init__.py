"""The public corpus of real sessions (issue 28): `sessions.csv` holds pointers only (repository,
path, commit, format, model, requests, licence, split, sha256); `extract` re-extracts the files from
fetched snapshots or blobless clones (stdlib only). See README.md for the split rule."""
