//! TODO(openai): filled in by the backend work.
