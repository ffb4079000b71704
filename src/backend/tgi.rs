//! TODO(tgi): filled in by the backend work.
