//! TODO(http): filled in by the backend work.
