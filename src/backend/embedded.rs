//! TODO(embedded): filled in by the backend work.
