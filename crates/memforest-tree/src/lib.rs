//! memforest-tree: MemTree node pages, a time-ordered B+ tree with dirty sets.
