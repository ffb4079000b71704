//! TODO(ollama): filled in by the backend work.
