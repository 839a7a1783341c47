// Placeholder: audio analysis, transcoding and hashing for the piece store.
