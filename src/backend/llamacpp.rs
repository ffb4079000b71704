//! TODO(llamacpp): filled in by the backend work.
