//! memforest-wal: the write-ahead log every MemForest write goes through.
