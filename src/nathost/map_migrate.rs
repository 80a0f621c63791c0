//! Migration between the chain layout and the map layout (one atomic transaction).
