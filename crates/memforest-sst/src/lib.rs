//! memforest-sst: immutable, checksummed segment files (SSTs).
